# bakery — see README.md. `make demo` and `make check` install what they need.

CC ?= cc
CFLAGS ?= -O2 -g
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SHAREDIR ?= $(PREFIX)/share/bakery
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d

# jq 1.6 has no runtime version call: -V says the libjq-dev compiled against.
JQ_VERSION := $(shell dpkg-query -W -f='$${Version}' libjq-dev 2>/dev/null)

override CFLAGS += -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-D_POSIX_C_SOURCE=200809L -DBAKERY_SHAREDIR='"$(SHAREDIR)"' \
	-DBAKERY_JQ_VERSION='"$(or $(JQ_VERSION),unknown)"'
ifeq ($(CI),true)
override CFLAGS += -Werror
endif
ifeq ($(SANITIZE),1)
override CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
override LDFLAGS += -fsanitize=address,undefined
endif
# SQLite (docs/adr/0004-linked-sqlite.md). SQLITE=linked: Debian's source
# package of SQLITE_VERSION, fetched and checked by mk/sqlite-fetch, its
# amalgamation kept in SQLITE_CACHE (make clean keeps it; one folder per
# version), compiled there with SQLITE_OPTIONS and linked statically through
# build/libbakery.a; its shell is bin/sqlite3. The default: bakery runs WAL
# on it. SQLITE=system: the system's libsqlite3-dev (Debian 12's 3.40.1, a
# rollback journal); make crash-other runs the crash matrix on it.
# build/flags names the choice, so switching rebuilds every object; objects
# wait for the header, not for the library.
SQLITE ?= linked
SQLITE_VERSION = 3.53.4
SQLITE_CACHE ?= .cache/sqlite
SQLITE_DIR = $(SQLITE_CACHE)/$(SQLITE_VERSION)
SQLITE_OPTIONS = -DSQLITE_THREADSAFE=2 -DSQLITE_DQS=0 \
	-DSQLITE_DEFAULT_MEMSTATUS=0 -DSQLITE_LIKE_DOESNT_MATCH_BLOBS \
	-DSQLITE_TRUSTED_SCHEMA=0 -DSQLITE_OMIT_DEPRECATED \
	-DSQLITE_OMIT_SHARED_CACHE -DSQLITE_OMIT_LOAD_EXTENSION \
	-DSQLITE_ENABLE_SESSION -DSQLITE_ENABLE_PREUPDATE_HOOK \
	-DHAVE_USLEEP=1 -DHAVE_NANOSLEEP=1 -DHAVE_FDATASYNC=1 \
	-DHAVE_LOCALTIME_R=1 -DHAVE_GMTIME_R=1 -DHAVE_ISNAN=1
SQLITE_CFLAGS = -O2 $(SQLITE_OPTIONS)
# One object per compiler and options, in a folder named by their hash:
# checkouts that share the cache with other options never rebuild each
# other's.
SQLITE_OUT = $(SQLITE_DIR)/$(shell echo '$(CC) $(SQLITE_CFLAGS)' | \
	md5sum | cut -c1-12)
ifeq ($(SQLITE),linked)
SQLITE_CPPFLAGS = -I$(SQLITE_DIR)
SQLITE_SOURCE = $(SQLITE_DIR)/SOURCE
SQLITE_OBJ = $(SQLITE_OUT)/sqlite3.o
SQLITE_LDLIBS = -lm
SQLITE_SHELL = bin/sqlite3
else ifeq ($(SQLITE),system)
SQLITE_LDLIBS = -lsqlite3
SQLITE_SHELL = sqlite-shell-system
else
$(error SQLITE is 'linked' or 'system', not '$(SQLITE)')
endif
# nats-server for the NATS tests, the soaks and the bench (docs/nats.md).
# NATS_SERVER=cached: Debian trixie's binary package of NATS_SERVER_VERSION,
# fetched and checked by mk/nats-fetch, unpacked in NATS_SERVER_CACHE (make
# clean keeps it), linked as bin/nats-server, first on the tests' PATH.
# NATS_SERVER=system: Debian 12's own /usr/sbin/nats-server (2.9), for the
# tests that show what 2.9 does; tests/nats.bash reads the same variable.
NATS_SERVER ?= cached
NATS_SERVER_VERSION = 2.10.27-1+b2
NATS_SERVER_CACHE ?= .cache/nats-server
NATS_SERVER_DIR = $(NATS_SERVER_CACHE)/$(firstword $(subst -, ,$(NATS_SERVER_VERSION)))
ifeq ($(NATS_SERVER),cached)
NATS_SERVER_BIN = bin/nats-server
else ifeq ($(NATS_SERVER),system)
NATS_SERVER_BIN = nats-server-system
else
$(error NATS_SERVER is 'cached' or 'system', not '$(NATS_SERVER)')
endif
export NATS_SERVER
# The session extension's interface, which the capture and the standby
# use (docs/adr/0011-a-standby-on-jetstream.md), seen in sqlite3.h.
SQLITE_API = -DSQLITE_ENABLE_SESSION -DSQLITE_ENABLE_PREUPDATE_HOOK
override CFLAGS += $(SQLITE_CPPFLAGS) $(SQLITE_API) -DBAKERY_SQLITE_LINK='"$(if $(SQLITE_OBJ),static,shared)"'
# libcrypto, libcurl and libnats are not linked: lib/lazy/lazy.c loads each on
# first use, by the soname the linker would have recorded (lib/lazy/lazy.h).
LDLIBS = $(SQLITE_LDLIBS) -ljq -lpthread -ldl
soname = $(shell objdump -p "$$($(CC) -print-file-name=lib$(1).so)" \
	2>/dev/null | sed -n 's/^ *SONAME *//p')
override CFLAGS += $(foreach l,crypto:CRYPTO curl:CURL nats:NATS,\
	$(if $(call soname,$(word 1,$(subst :, ,$(l)))),\
	-DLAZY_$(word 2,$(subst :, ,$(l)))_SONAME='"$(call soname,$(word 1,$(subst :, ,$(l))))"'))

PROGS = bakery bakery-order bakery-relay bakery-consume bakery-dlq bakery-wipe \
	bakery-redrive bakery-queue bakery-fault bakery-show bakery-webhook \
	bakery-status bakery-trace bakery-doctor bakery-backup bakery-console \
	bakery-standby
LIB_SRC = $(wildcard lib/*/*.c)
LIB_OBJ = $(LIB_SRC:%.c=build/%.o)
UNIT_SRC = $(wildcard tests/unit/*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=build/tests/%.t)
BINS = $(PROGS:%=bin/%)
BENCH_SRC = $(filter-out tests/bench/raw-nats.c,$(wildcard tests/bench/*.c))
BENCH_BIN = $(BENCH_SRC:tests/bench/%.c=build/bench/%)

all: $(BINS) $(SQLITE_SHELL)

# Objects rebuild when the flags change (SANITIZE=1 and back).
build/flags: FORCE $(SQLITE_SOURCE)
	@mkdir -p build
	@echo '$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS)' | cmp -s - $@ || \
		echo '$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS)' > $@

build/%.o: %.c build/flags $(wildcard lib/*/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

build/libbakery.a: $(LIB_OBJ) $(SQLITE_OBJ)
	rm -f $@
	ar rcs $@ $(LIB_OBJ) $(SQLITE_OBJ)

bin/%: build/cmd/%.o build/libbakery.a
	@mkdir -p bin
	$(CC) $(LDFLAGS) -o $@ $< build/libbakery.a $(LDLIBS)

# The console hashes passwords with libcrypt (lib/web/account.h); no other
# program needs it but those that read the console's schema, which lives
# beside it: bakery-standby, which makes console.db, tests/unit/schemas.c
# and tests/unit/standby.c.
bin/bakery-console bin/bakery-standby build/tests/schemas.t \
	build/tests/standby.t: LDLIBS += -lcrypt

build/tests/checker: build/tests/checker.o build/libbakery.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< build/libbakery.a $(LDLIBS)

build/tests/%.t: build/tests/unit/%.o build/libbakery.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< build/libbakery.a $(LDLIBS)

build/bench/%: build/tests/bench/%.o build/libbakery.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< build/libbakery.a $(LDLIBS)

# bakery with one kind more, made as docs/design.md's "How to add a kind"
# says, so that the recipe is a build that must pass: tests/kind/KIND.c
# put in as lib/objects/KIND.c, its line X(KIND) added after the last of
# lib/objects/kinds.c, and tests/kind/KIND.routes's lines after
# share/routes; every other object is the shipped build's, so the
# variant costs two compiles and its links. In build/extra-kind/: bin/,
# share/ beside it (where an uninstalled build finds its routes and
# menu), and the checker and tests/unit/kind.c linked with it
# (tests/cli/93-add-a-kind.bats). The shipped build never sees the kind.
EXTRA_KIND = tally
EXTRA = build/extra-kind
EXTRA_LIB_OBJ = $(filter-out build/lib/objects/kinds.o,$(LIB_OBJ)) \
	$(EXTRA)/lib/objects/kinds.o $(EXTRA)/lib/objects/$(EXTRA_KIND).o
EXTRA_OUT = $(PROGS:%=$(EXTRA)/bin/%) $(EXTRA)/share/routes \
	$(EXTRA)/share/menu.tsv $(EXTRA)/tests/checker $(EXTRA)/tests/kind.t
extra-kind: $(EXTRA_OUT)

# A kinds.c without the added line would build the shipped list: a
# changed shape of kinds.c stops here instead.
$(EXTRA)/lib/objects/kinds.c: lib/objects/kinds.c
	@mkdir -p $(@D)
	sed 's/^\([[:space:]]*X([a-z0-9_]*)\)$$/\1 \\\n\tX($(EXTRA_KIND))/' $< >$@
	@[ "$$(grep -cx '[[:space:]]*X($(EXTRA_KIND))' $@)" = 1 ] || { \
		echo "make extra-kind: error: not one line X($(EXTRA_KIND))" \
			"added to lib/objects/kinds.c's list" >&2; rm -f $@; exit 1; }

$(EXTRA)/lib/objects/$(EXTRA_KIND).c: tests/kind/$(EXTRA_KIND).c
	@mkdir -p $(@D)
	cp $< $@

# Their includes ("../core/kind.h") are found from lib/objects, as if
# they were there.
$(EXTRA)/lib/objects/%.o: $(EXTRA)/lib/objects/%.c build/flags $(wildcard lib/*/*.h)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Ilib/objects -c -o $@ $<

$(EXTRA)/libbakery.a: $(EXTRA_LIB_OBJ) $(SQLITE_OBJ)
	rm -f $@
	ar rcs $@ $(EXTRA_LIB_OBJ) $(SQLITE_OBJ)

$(EXTRA)/bin/%: build/cmd/%.o $(EXTRA)/libbakery.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(EXTRA)/libbakery.a $(LDLIBS)

$(EXTRA)/bin/bakery-console $(EXTRA)/bin/bakery-standby: LDLIBS += -lcrypt

$(EXTRA)/tests/checker: build/tests/checker.o $(EXTRA)/libbakery.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(EXTRA)/libbakery.a $(LDLIBS)

$(EXTRA)/tests/%.t: build/tests/unit/%.o $(EXTRA)/libbakery.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(EXTRA)/libbakery.a $(LDLIBS)

$(EXTRA)/share/routes: share/routes tests/kind/$(EXTRA_KIND).routes
	@mkdir -p $(@D)
	cat $^ >$@

$(EXTRA)/share/menu.tsv: share/menu.tsv
	@mkdir -p $(@D)
	cp $< $@

# The raw NATS client B6 compares the NATS driver with.
build/bench/raw-nats: build/tests/bench/raw-nats.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -lnats

# The amalgamation, fetched once per version (mk/sqlite-fetch says what it
# checks), compiled once per SQLITE_OPTIONS and compiler.
$(SQLITE_DIR)/SOURCE:
	mk/sqlite-fetch $(SQLITE_VERSION) $(SQLITE_CACHE) build/sqlite

$(SQLITE_OUT)/sqlite3.o: $(SQLITE_DIR)/SOURCE
	@mkdir -p $(SQLITE_OUT)
	echo '$(CC) $(SQLITE_CFLAGS)' > $(SQLITE_OUT)/options
	$(CC) $(SQLITE_CFLAGS) -c -o $@.tmp $(SQLITE_DIR)/sqlite3.c
	mv $@.tmp $@

# The shell of the same library and options, with readline, for operators
# and for the bench's B0; first on PATH in the tests, as bakery's programs.
$(SQLITE_OUT)/sqlite3: $(SQLITE_OUT)/sqlite3.o
	$(CC) $(SQLITE_CFLAGS) -DHAVE_READLINE=1 -o $@ $(SQLITE_DIR)/shell.c \
		$(SQLITE_OUT)/sqlite3.o -lreadline -lm

bin/sqlite3: $(SQLITE_OUT)/sqlite3
	@mkdir -p bin
	cp $< $@

# With the system's library, the system's shell: none left in bin/.
sqlite-shell-system:
	@rm -f bin/sqlite3

# make deps readies the linked library whichever SQLITE is chosen.
sqlite-cache: $(SQLITE_OUT)/sqlite3.o $(SQLITE_OUT)/sqlite3

# The server, fetched once per version (mk/nats-fetch says what it checks).
$(NATS_SERVER_DIR)/SOURCE:
	mk/nats-fetch $(NATS_SERVER_VERSION) $(NATS_SERVER_CACHE) build/nats-server

# make sees the binary's date through the link: the link is checked, and
# made again only when it points elsewhere.
bin/nats-server: $(NATS_SERVER_DIR)/SOURCE
	@mkdir -p bin
	@[ "$$(readlink $@)" = $(abspath $(NATS_SERVER_DIR))/nats-server ] || \
		ln -sfnv $(abspath $(NATS_SERVER_DIR))/nats-server $@

# With the system's server, none left in bin/.
nats-server-system:
	@rm -f bin/nats-server

DEPS = gcc clang libclang-rt-14-dev make libsqlite3-dev sqlite3 libjq-dev jq libssl-dev \
	libcurl4-openssl-dev libnats-dev nats-server bats bats-assert \
	bats-support valgrind mandoc faketime lighttpd python3 strace systemd \
	zsh fish man-db shellcheck openssl \
	dpkg-dev gpgv tcl xz-utils libreadline-dev \
	debhelper lintian mmdebstrap systemd-container curl libcrypt-dev \
	chromium chromium-driver python3-selenium
deps:
	@missing=$$(for p in $(DEPS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "make deps: installing" $$missing >&2; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq \
			--no-install-recommends $$missing; \
	fi
	@$(MAKE) --no-print-directory sqlite-cache $(NATS_SERVER_BIN)

demo: deps
	$(MAKE) all
	tests/demo.sh

# A host lost mid-load (tests/failover.sh, docs/reliability.md): make check
# runs two of its ways, make failover the twenty runs of the proof, four of
# each way, 40 orders each, their lines in build/failover.jsonl.
FAILOVER_CHECK_RUNS ?= 2
failover: all build/tests/checker
	FAILOVER_LOG=build/failover.jsonl tests/failover.sh 20 40

# Orders in the NATS cluster test (tests/cli/56-nats-cluster.bats) inside
# make check; the issue's full run of 1,000 is make check-nats-cluster.
CLUSTER_ORDERS ?= 200

# make check: lint, then its stages two at a time (CHECK_STAGES, each
# logged to build/NAME.log and summed up by its last line; a failing one
# prints its log's tail), then the main suite, last, so that make check ends
# with prove's summary. The stages are ordered for the two slots: the NATS
# run of the CLI suite takes one while the others follow each other in the
# second. check-boot is make boot (make deb and lintian, then the package
# under a real systemd): it runs as root and reaches deb.debian.org for its
# root once (.cache/boot/); about 2 min from an empty cache.
CHECK_STAGES = check-nats-cli check-crash check-crash-nats check-crash-other \
	check-powercut check-soak check-soak-kills check-soak-nats check-stress \
	check-fuzz check-failover check-boot
CHECK_JOBS ?= 3
check: deps lint
	$(MAKE) all $(UNIT_BIN) build/tests/checker $(BENCH_BIN) build/bench/raw-nats extra-kind
	$(MAKE) --no-print-directory -j2 -Otarget $(CHECK_STAGES)
	BAKERY_TEST_CLUSTER_ORDERS=$(CLUSTER_ORDERS) prove -j$(CHECK_JOBS) -f $(UNIT_BIN) tests/cli/*.bats

# logged NAME,COMMAND: COMMAND's output in build/NAME.log; its last line
# shown, or its last 40 lines when it fails.
logged = @$(2) >build/$(1).log 2>&1 || { tail -40 build/$(1).log; exit 1; }; \
	tail -1 build/$(1).log
check-nats-cli:
	$(call logged,nats-cli,tests/nats-cli.sh)
check-crash:
	$(call logged,crash,tests/crash-matrix.sh)
check-crash-nats:
	$(call logged,crash-nats,CRASH_QUEUE=nats \
		CRASH_MATRIX_ONLY='$(NATS_CRASH_CHECK_POINTS)' tests/crash-matrix.sh)
check-crash-other:
	$(call logged,crash-other,$(MAKE) --no-print-directory crash-other)
check-powercut:
	$(call logged,powercut,POWERCUT_EVERY=$(POWERCUT_CHECK_EVERY) tests/powercut.sh)
check-soak:
	$(call logged,soak,tests/soak.sh $(SOAK_CHECK_ORDERS) 1)
check-soak-kills:
	$(call logged,soak-kills,tests/soak.sh --kills $(SOAK_KILLS_CHECK_ORDERS) 1)
check-soak-nats:
	$(call logged,soak-nats,SOAK_QUEUE=nats tests/soak.sh $(SOAK_NATS_CHECK_ORDERS) 1)
check-stress:
	$(call logged,stress,tests/stress.sh $(STRESS_CHECK_TIME))
check-fuzz:
	$(call logged,fuzz,$(MAKE) --no-print-directory fuzz FUZZ_TIME=$(FUZZ_CHECK_TIME))
check-failover:
	$(call logged,failover,tests/failover.sh $(FAILOVER_CHECK_RUNS) 20)
check-boot:
	$(call logged,boot,$(MAKE) --no-print-directory boot)
.PHONY: check $(CHECK_STAGES)

# The proof (docs/reliability.md): the crash matrix, the chaos soak, and
# the soak of kills only (SOAK_MODE=kills: no fault, no redrive, no dead
# letter allowed).
SOAK_ORDERS ?= 10000
SOAK_SEED ?= 1
SOAK_MODE ?= chaos
SOAK_CHECK_ORDERS ?= 300
SOAK_KILLS_CHECK_ORDERS ?= 50
# make soak QUEUE=nats: the chaos soak on the NATS driver, against a
# nats-server of its own that is SIGKILLed and restarted too; make check
# runs SOAK_NATS_CHECK_ORDERS of it.
SOAK_NATS_CHECK_ORDERS ?= 100
# make crash QUEUE=nats: the matrix on the NATS driver, against a
# nats-server of its own; make check runs NATS_CRASH_CHECK_POINTS of it.
QUEUE ?= sqlite
NATS_CRASH_CHECK_POINTS ?= consume.before_ack\|nats.after_dlq_publish
crash: all build/tests/checker
	CRASH_QUEUE=$(QUEUE) tests/crash-matrix.sh

# The crash matrix on the other SQLite too (SQLITE=linked: WAL on a fixed
# library; SQLITE=system: a rollback journal on Debian 12's 3.40.1), from a
# copy of the sources built in build-linked/ or build-system/, so that
# build/ and bin/ keep the chosen one.
SQLITE_OTHER = $(if $(filter linked,$(SQLITE)),system,linked)
OTHER_COPY = Makefile mk cmd lib share tests
crash-other:
	mkdir -p build-$(SQLITE_OTHER)
	rm -rf $(OTHER_COPY:%=build-$(SQLITE_OTHER)/%)
	cp -Rp $(OTHER_COPY) build-$(SQLITE_OTHER)/
	$(MAKE) -C build-$(SQLITE_OTHER) SQLITE=$(SQLITE_OTHER) \
		SQLITE_CACHE=$(abspath $(SQLITE_CACHE)) all build/tests/checker
	build-$(SQLITE_OTHER)/tests/crash-matrix.sh

# Power cut at every sync of every step of an order's path
# (tests/powercut.sh, lib/store/testvfs.c): BAKERY_SYNC=normal and
# BAKERY_POWERCUT_MODE=torn from the command line or the environment;
# make check cuts at every POWERCUT_CHECK_EVERY-th sync.
POWERCUT_CHECK_EVERY ?= 5
powercut: all build/tests/checker
	tests/powercut.sh

soak: all build/tests/checker
	@case '$(SOAK_MODE)' in chaos | kills) ;; *) echo "make soak: error: SOAK_MODE: want chaos or kills" >&2; exit 2 ;; esac
	SOAK_QUEUE=$(QUEUE) tests/soak.sh $(if $(filter kills,$(SOAK_MODE)),--kills) $(SOAK_ORDERS) $(SOAK_SEED)
	tests/stress.sh $(STRESS_TIME)

# The CLI tests with every program under valgrind memcheck: wrappers in
# build/valgrind/bin come first on PATH (BAKERY_TEST_BIN, see
# tests/cli/helpers.bash); each process logs to build/valgrind/log/PID.log,
# and any error or definite leak fails (found by the ERROR SUMMARY and LEAK
# SUMMARY lines, which valgrind writes only without -q). A process given
# BAKERY_CRASH_AT is not checked for leaks: one that kills itself at a crash
# point is checked by valgrind all the same, with the pointers on its stack
# already gone, and what it held shows as definitely lost. A program takes
# 1-2 s to start under valgrind here, so the default is the subset that
# walks the paid order's whole path, the dead letters, the crashes and the
# webhook (VALGRIND_TESTS=... for others; the concurrency and 10,000-object
# tests are too slow under valgrind to be useful).
VALGRIND_TESTS ?= 00-smoke 10-order 20-consume 21-dlq 22-redrive 30-crash \
	41-webhook
valgrind: all build/tests/checker
	rm -rf build/valgrind && mkdir -p build/valgrind/bin build/valgrind/log
	for p in $(PROGS); do \
		printf '#!/bin/sh\nleaks=full\n[ -z "$${BAKERY_CRASH_AT:-}" ] || leaks=no\nexec valgrind --error-exitcode=99 --leak-check=$$leaks --errors-for-leak-kinds=definite --log-file=%s/build/valgrind/log/%%p.log %s/bin/%s "$$@"\n' \
			"$(CURDIR)" "$(CURDIR)" $$p >build/valgrind/bin/$$p; \
		chmod +x build/valgrind/bin/$$p; \
	done
	BAKERY_TEST_BIN=$(CURDIR)/build/valgrind/bin prove -f $(VALGRIND_TESTS:%=tests/cli/%.bats)
	@logs=$$(ls build/valgrind/log | wc -l); \
	bad=$$(grep -l 'ERROR SUMMARY: [1-9]\|definitely lost: [1-9]' build/valgrind/log/*.log | wc -l); \
	echo "valgrind: $$logs processes, $$bad with errors or definite leaks"; \
	[ $$bad = 0 ] || { grep -l 'ERROR SUMMARY: [1-9]\|definitely lost: [1-9]' build/valgrind/log/*.log | head -3 | xargs cat; exit 1; }

# 16 writers on one object and 4 consumers on one queue.
STRESS_TIME ?= 60
STRESS_CHECK_TIME ?= 15
stress: all build/tests/checker
	tests/stress.sh $(STRESS_TIME)

# Fuzzing with libFuzzer (clang): the library built again with the fuzzer's
# coverage and ASan/UBSan into build/fuzz/, a harness per parser in
# tests/fuzz/, seeds in tests/fuzz/corpus/NAME/ (new inputs go to
# build/fuzz/corpus/NAME/). FUZZ_TIME seconds per harness.
FUZZ_CC = clang
FUZZ_TIME ?= 60
FUZZ_CHECK_TIME ?= 10
FUZZ_TARGETS = envelope lines signature menu webhook
FUZZ_FLAGS = -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L \
	-DBAKERY_SHAREDIR='"$(SHAREDIR)"' -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined \
	$(SQLITE_CPPFLAGS) $(SQLITE_API)
FUZZ_LIB_OBJ = $(LIB_SRC:%.c=build/fuzz/%.o)
# libjq 1.6 (Debian 12) leaks a string token when jv_parse_sized meets some
# malformed JSON ('{"a":.10""}', 17 bytes); not ours to fix, and no LSan
# suppression can tell it from a leak of a parsed value, so the JSON
# harnesses run without leak detection (make valgrind covers bakery's own).
FUZZ_NO_LEAKS = envelope lines webhook

build/fuzz/%.o: %.c build/flags $(wildcard lib/*/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/libbakery.a: $(FUZZ_LIB_OBJ) $(SQLITE_OBJ)
	rm -f $@
	ar rcs $@ $(FUZZ_LIB_OBJ) $(SQLITE_OBJ)

build/fuzz/fuzz-%: tests/fuzz/%.c build/fuzz/libbakery.a
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< build/fuzz/libbakery.a $(LDLIBS)

fuzz: $(FUZZ_TARGETS:%=build/fuzz/fuzz-%)
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build/fuzz/corpus/$$t build/fuzz/crashes/$$t; \
		leaks=1; case " $(FUZZ_NO_LEAKS) " in *" $$t "*) leaks=0;; esac; \
		ASAN_OPTIONS=detect_leaks=$$leaks build/fuzz/fuzz-$$t \
			-detect_leaks=$$leaks -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
			-artifact_prefix=build/fuzz/crashes/$$t/ \
			build/fuzz/corpus/$$t tests/fuzz/corpus/$$t \
			>build/fuzz/$$t.log 2>&1; rc=$$?; \
		runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' build/fuzz/$$t.log); \
		echo "fuzz $$t: $$runs executions in $(FUZZ_TIME) s, exit $$rc"; \
		if [ $$rc -ne 0 ]; then tail -30 build/fuzz/$$t.log; exit 1; fi; \
	done

# The CLI suite once more with BAKERY_QUEUE=nats://... (one nats-server).
check-nats: deps
	$(MAKE) all
	tests/nats-cli.sh

# The three-node cluster test with the issue's 1,000 orders (a few minutes).
check-nats-cluster: deps
	$(MAKE) all
	BAKERY_TEST_CLUSTER_ORDERS=1000 prove -f tests/cli/56-nats-cluster.bats

# The quick loop (README): the unit tests and the CLI suite on the embedded
# queue, on a built tree, ending with prove's summary; none of make check's
# package installs, crash matrix, soak, stress, fuzzing or NATS (TEST_SKIP:
# the files that start nats-servers). T=FILE... runs only those files
# (make test T=tests/cli/20-consume.bats). Three files at a time
# (TEST_JOBS; the files wait on timers and servers as often as they
# compute): every test has a home of its own, and the servers a test
# starts listen on free ports. About 2.5 min on an idle 2-core machine;
# prove --timer gives each file's time.
TEST_SKIP = tests/cli/55-nats.bats tests/cli/56-nats-cluster.bats tests/cli/58-two-homes.bats \
	tests/cli/67-standby.bats
# The slowest files start first, so that none of them starts last and
# runs alone while the other jobs have nothing left.
TEST_SLOW = $(wildcard tests/cli/52-full-disk.bats tests/cli/54-wal.bats \
	tests/cli/59-doctor.bats tests/cli/46-external.bats \
	tests/cli/91-install.bats tests/cli/90-man.bats \
	tests/cli/62-console-browser.bats tests/cli/61-console.bats)
T = $(UNIT_BIN) $(TEST_SLOW) \
	$(filter-out $(TEST_SKIP) $(TEST_SLOW),$(wildcard tests/cli/*.bats))
TEST_JOBS ?= 3
test: all $(UNIT_BIN) build/tests/checker $(BENCH_BIN) extra-kind
	prove -j$(TEST_JOBS) -f --timer $(T)

# The shell scripts of the tests and tools, through Debian's shellcheck,
# which knows bats (`! cmd` mid-test, which never fails a test, is its error
# SC2314). Warnings and errors: its style notes are not enforced, and the
# subshell of each bats test is what SC2030/SC2031 would flag in every file
# that exports in a test.
SHELL_SCRIPTS = tests/*.sh tests/nats.bash tests/matrix.bash tests/bench/*.sh \
	tests/cli/helpers.bash tests/cli/lighttpd.bash tests/cli/*.bats .ci/run completions/bakery.bash \
	mk/layers mk/kinds mk/exits share/examples/* debian/dlopen-depends debian/bakery.postinst \
	debian/bakery.prerm debian/bakery.postrm
lint: deps layers
	shellcheck -S warning $(SHELL_SCRIPTS)
# The layer rule of docs/design.md ("Modules"), from the includes of lib/;
# no exit below cmd/ but where lib/base/util.h says (mk/exits); no kind
# of object named below the domain (mk/kinds); and no file of lib/ over
# 600 lines (one that grows past it is split by what it owns).
layers:
	mk/layers docs/design.md
	mk/exits
	mk/kinds docs/design.md
	@awk 'FNR == 601 { print FILENAME ": over 600 lines: split it by what it owns"; bad = 1 } END { exit bad }' lib/*/*.c lib/*/*.h
.PHONY: test lint layers

# Figures, not tests: see tests/bench/run.sh and docs/costs.md. A run of
# every part at full size writes both docs/costs.json and the table of a
# new section of docs/costs.md; one of some parts (BENCH_PARTS) or at
# tiny sizes (BENCH_QUICK) writes neither.
bench: deps
	$(MAKE) all $(BENCH_BIN) build/bench/raw-nats
	$(if $(BENCH_PARTS)$(filter 1,$(BENCH_QUICK)),,BENCH_JSON=docs/costs.json BENCH_MD=docs/costs.md) \
		tests/bench/run.sh

UNITS = $(notdir $(wildcard share/systemd/*))
EXAMPLES = $(wildcard share/examples/*)

# What make install makes, by folder. The configuration (the routes and the
# units' environment, bakery(7)) goes to SYSCONFDIR/bakery: /etc with
# PREFIX=/usr (the package's), PREFIX/etc otherwise. The units, the
# sysusers.d and tmpfiles.d entries and the lighttpd file name the installed
# places (@BINDIR@, @SHAREDIR@, @SYSCONFDIR@, substituted here).
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
LIBDIR_SYSTEMD ?= $(PREFIX)/lib
SYSUSERSDIR ?= $(LIBDIR_SYSTEMD)/sysusers.d
TMPFILESDIR ?= $(LIBDIR_SYSTEMD)/tmpfiles.d
INSTALL_DIRS = $(BINDIR) $(SHAREDIR)/cron $(SHAREDIR)/lighttpd \
	$(SHAREDIR)/examples $(UNITDIR) $(SYSUSERSDIR) $(TMPFILESDIR) \
	$(SYSCONFDIR)/bakery $(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man7 \
	$(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
SUBST = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SHAREDIR@|$(SHAREDIR)|g' \
	-e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'
# The configuration an operator edits: installed when absent, so that an
# edited file is never overwritten; removed by uninstall only when unedited.
CONF = routes:share/routes bakery.env:share/bakery.env

install: all
	install -d $(INSTALL_DIRS:%=$(DESTDIR)%)
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 644 share/menu.tsv $(DESTDIR)$(SHAREDIR)
	# The routes' example names the examples where they are installed.
	$(SUBST) share/routes >$(DESTDIR)$(SHAREDIR)/routes
	chmod 644 $(DESTDIR)$(SHAREDIR)/routes
	install -m 755 $(EXAMPLES) $(DESTDIR)$(SHAREDIR)/examples
	install -m 644 share/cron/bakery.crontab $(DESTDIR)$(SHAREDIR)/cron
	$(SUBST) share/lighttpd/bakery-webhook.conf >$(DESTDIR)$(SHAREDIR)/lighttpd/bakery-webhook.conf
	for u in $(UNITS); do \
		$(SUBST) share/systemd/$$u > $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	$(SUBST) share/sysusers/bakery.conf >$(DESTDIR)$(SYSUSERSDIR)/bakery.conf
	$(SUBST) share/tmpfiles/bakery.conf >$(DESTDIR)$(TMPFILESDIR)/bakery.conf
	chmod 644 $(DESTDIR)$(SHAREDIR)/lighttpd/bakery-webhook.conf \
		$(UNITS:%=$(DESTDIR)$(UNITDIR)/%) $(DESTDIR)$(SYSUSERSDIR)/bakery.conf \
		$(DESTDIR)$(TMPFILESDIR)/bakery.conf
	for c in $(CONF); do \
		to=$(DESTDIR)$(SYSCONFDIR)/bakery/$${c%%:*}; \
		[ -e "$$to" ] || { $(SUBST) $${c#*:} >"$$to" && chmod 644 "$$to"; } || exit 1; \
	done
	install -m 644 docs/man/*.1 $(DESTDIR)$(MANDIR)/man1
	install -m 644 docs/man/*.5 $(DESTDIR)$(MANDIR)/man5
	install -m 644 docs/man/*.7 $(DESTDIR)$(MANDIR)/man7
	# bash-completion loads a command's completion by its name: one file,
	# a link for every program.
	install -m 644 completions/bakery.bash $(DESTDIR)$(BASHCOMPDIR)/bakery
	for p in $(filter-out bakery,$(PROGS)); do \
		ln -sf bakery $(DESTDIR)$(BASHCOMPDIR)/$$p || exit 1; \
	done
	install -m 644 completions/_bakery $(DESTDIR)$(ZSHCOMPDIR)/_bakery
	# fish also loads by name: a link for every program.
	install -m 644 completions/bakery.fish $(DESTDIR)$(FISHCOMPDIR)/bakery.fish
	for p in $(filter-out bakery,$(PROGS)); do \
		ln -sf bakery.fish $(DESTDIR)$(FISHCOMPDIR)/$$p.fish || exit 1; \
	done

# Every file install made, then every folder it names and their parents,
# each only when empty, up to DESTDIR or PREFIX's parent (a folder that
# holds anything else stays; nothing above PREFIX is touched).
uninstall:
	rm -f $(PROGS:%=$(DESTDIR)$(BINDIR)/%)
	rm -f $(foreach s,1 5 7,$(patsubst docs/man/%,$(DESTDIR)$(MANDIR)/man$(s)/%,$(wildcard docs/man/*.$(s))))
	rm -f $(DESTDIR)$(SHAREDIR)/menu.tsv $(DESTDIR)$(SHAREDIR)/routes
	rm -f $(EXAMPLES:share/%=$(DESTDIR)$(SHAREDIR)/%)
	rm -f $(DESTDIR)$(SHAREDIR)/cron/bakery.crontab
	rm -f $(DESTDIR)$(SHAREDIR)/lighttpd/bakery-webhook.conf
	rm -f $(UNITS:%=$(DESTDIR)$(UNITDIR)/%)
	rm -f $(DESTDIR)$(SYSUSERSDIR)/bakery.conf $(DESTDIR)$(TMPFILESDIR)/bakery.conf
	rm -f $(PROGS:%=$(DESTDIR)$(BASHCOMPDIR)/%) $(DESTDIR)$(ZSHCOMPDIR)/_bakery
	rm -f $(PROGS:%=$(DESTDIR)$(FISHCOMPDIR)/%.fish)
	for c in $(CONF); do \
		to=$(DESTDIR)$(SYSCONFDIR)/bakery/$${c%%:*}; \
		! $(SUBST) $${c#*:} | cmp -s - "$$to" || rm -f "$$to"; \
	done
	for d in $(INSTALL_DIRS:%=$(DESTDIR)%); do \
		while [ "$$d" != '$(DESTDIR)' ] && [ "$$d" != '$(DESTDIR)$(patsubst %/,%,$(dir $(PREFIX)))' ] && \
			[ "$${d#/}" ] && rmdir "$$d" 2>/dev/null; do d=$${d%/*}; done; \
	done

# make deb: bakery_VERSION_ARCH.deb in build/deb/ with Debian's tools
# (debian/, docs/adr/0005-debian-package.md), then lintian, whose output is
# printed and whose errors fail. dpkg-buildpackage runs in a copy of the
# sources, build/deb/bakery-VERSION/, so that its clean step leaves this
# tree's build/ and bin/ alone and its results land in build/deb/. The
# pinned SQLite is readied first: the package build fetches nothing.
VERSION = $(shell sed -n 's/^\#define BAKERY_VERSION "\(.*\)"/\1/p' lib/base/util.h)
DEB_COPY = Makefile mk cmd lib share docs completions debian
DEB = build/deb/bakery_$(VERSION)_$(shell dpkg --print-architecture).deb
# Built again only when a file it is made of changed.
$(DEB): $(shell find $(DEB_COPY) -type f) | sqlite-cache
	@v=$$(dpkg-parsechangelog -S Version); [ "$$v" = '$(VERSION)' ] || { \
		echo "make deb: error: debian/changelog says $$v, lib/base/util.h $(VERSION)" >&2; exit 1; }
	rm -rf build/deb && mkdir -p build/deb/bakery-$(VERSION)
	cp -Rp $(DEB_COPY) build/deb/bakery-$(VERSION)/
	cd build/deb/bakery-$(VERSION) && SQLITE_CACHE=$(abspath $(SQLITE_CACHE)) \
		dpkg-buildpackage -b -uc -us -j2 >../build.log 2>&1 || { tail -40 ../build.log; exit 1; }
deb: $(DEB)
	@ls -l $(DEB)
	lintian -I --pedantic $(DEB:.deb=.changes)

# make boot (tests/boot.sh): the package from make deb installed with apt in
# a fresh Debian 12 root made by mmdebstrap (cached in .cache/boot/), booted
# with a real systemd under systemd-nspawn; orders placed and paid as the
# units' user while the consumer is restarted and killed; the checker then
# finds every paid order's effects applied once.
boot: deb build/tests/checker
	tests/boot.sh $(DEB)

clean:
	rm -rf build bin build-system build-linked

.PHONY: all deps sqlite-cache sqlite-shell-system nats-server-system demo check check-nats check-nats-cluster failover \
	crash crash-other powercut soak stress fuzz valgrind bench install uninstall deb boot clean \
	extra-kind FORCE
.SECONDARY:
