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
LDLIBS = -lsqlite3 -ljq -lcrypto -lcurl -lnats -lpthread

PROGS = bakery bakery-order bakery-relay bakery-consume bakery-dlq bakery-wipe \
	bakery-redrive bakery-queue bakery-fault bakery-show bakery-webhook \
	bakery-status bakery-trace
LIB_SRC = $(wildcard lib/*.c lib/objects/*.c)
LIB_OBJ = $(LIB_SRC:%.c=build/%.o)
UNIT_SRC = $(wildcard tests/unit/*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=build/tests/%.t)
BINS = $(PROGS:%=bin/%)

all: $(BINS)

# Objects rebuild when the flags change (SANITIZE=1 and back).
build/flags: FORCE
	@mkdir -p build
	@echo '$(CC) $(CFLAGS) $(LDFLAGS)' | cmp -s - $@ || \
		echo '$(CC) $(CFLAGS) $(LDFLAGS)' > $@

build/%.o: %.c build/flags $(wildcard lib/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

build/libbakery.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $(LIB_OBJ)

bin/%: build/cmd/%.o build/libbakery.a
	@mkdir -p bin
	$(CC) $(LDFLAGS) -o $@ $< build/libbakery.a $(LDLIBS)

build/tests/%.t: build/tests/unit/%.o build/libbakery.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< build/libbakery.a $(LDLIBS)

DEPS = gcc make libsqlite3-dev sqlite3 libjq-dev jq libssl-dev \
	libcurl4-openssl-dev libnats-dev nats-server bats bats-assert \
	bats-support valgrind mandoc faketime lighttpd python3 strace systemd \
	zsh fish man-db
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

demo: deps
	$(MAKE) all
	tests/demo.sh

# Orders in the NATS cluster test (tests/cli/56-nats-cluster.bats) inside
# make check; the issue's full run of 1,000 is make check-nats-cluster.
CLUSTER_ORDERS ?= 200

check: deps
	$(MAKE) all $(UNIT_BIN)
	BAKERY_TEST_CLUSTER_ORDERS=$(CLUSTER_ORDERS) prove -f $(UNIT_BIN) tests/cli/*.bats
	tests/nats-cli.sh

# The CLI suite once more with BAKERY_QUEUE=nats://... (one nats-server).
check-nats: deps
	$(MAKE) all
	tests/nats-cli.sh

# The three-node cluster test with the issue's 1,000 orders (a few minutes).
check-nats-cluster: deps
	$(MAKE) all
	BAKERY_TEST_CLUSTER_ORDERS=1000 prove -f tests/cli/56-nats-cluster.bats

UNITS = $(notdir $(wildcard share/systemd/*))

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SHAREDIR)/cron \
		$(DESTDIR)$(SHAREDIR)/lighttpd $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 644 share/menu.tsv $(DESTDIR)$(SHAREDIR)
	install -m 644 share/cron/bakery.crontab $(DESTDIR)$(SHAREDIR)/cron
	install -m 644 share/lighttpd/bakery-webhook.conf $(DESTDIR)$(SHAREDIR)/lighttpd
	for u in $(UNITS); do \
		sed 's|@BINDIR@|$(BINDIR)|g' share/systemd/$$u > $(DESTDIR)$(UNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
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

uninstall:
	rm -f $(PROGS:%=$(DESTDIR)$(BINDIR)/%) $(PROGS:%=$(DESTDIR)$(MANDIR)/man1/%.1)
	rm -f $(DESTDIR)$(SHAREDIR)/menu.tsv $(DESTDIR)$(SHAREDIR)/cron/bakery.crontab
	rm -f $(DESTDIR)$(SHAREDIR)/lighttpd/bakery-webhook.conf
	rm -f $(UNITS:%=$(DESTDIR)$(UNITDIR)/%)
	rm -f $(DESTDIR)$(MANDIR)/man5/bakery-envelope.5 $(DESTDIR)$(MANDIR)/man7/bakery.7
	rm -f $(PROGS:%=$(DESTDIR)$(BASHCOMPDIR)/%) $(DESTDIR)$(ZSHCOMPDIR)/_bakery
	rm -f $(PROGS:%=$(DESTDIR)$(FISHCOMPDIR)/%.fish)

clean:
	rm -rf build bin

.PHONY: all deps demo check check-nats check-nats-cluster install uninstall clean FORCE
.SECONDARY:
