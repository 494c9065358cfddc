# bash completion for bakery's programs; see bakery(7).
# Installed as bash-completion/completions/bakery, with a link per program.

_bakery_programs="order relay consume dlq redrive queue fault show status
trace wipe webhook doctor backup console standby"
_bakery_common="-h --help -V --version -H --home -s --sandbox --queue
-q --quiet -v --verbose"

# The program's own options; those taking a value are marked with '='.
_bakery_options()
{
	case $1 in
	bakery-order) echo "--customer= --day= --delivery= --key= --card=
		--payment-method= --stripe-key-file= --batch" ;;
	bakery-consume) echo "--drain --once --follow --batch= --max-retries=
		--visibility= --retry-delay= --stdin --routes --routes-file=
		--subscriber-timeout=" ;;
	bakery-dlq) echo "--follow" ;;
	bakery-queue) echo "--dlq --limit= --replicas=" ;;
	bakery-redrive) echo "--all" ;;
	bakery-relay) echo "--all --due --watch" ;;
	bakery-show) echo "--list --rows= --after= --limit=" ;;
	bakery-status) echo "--json --prom= --max-age=" ;;
	bakery-trace) echo "--json" ;;
	bakery-webhook) echo "--signature= --secret-file= --tolerance=
		--max-body=" ;;
	bakery-wipe) echo "--all --resume --daily --dry-run" ;;
	bakery-console) echo "--operator" ;;
	bakery-standby) echo "--primary --standby --promote --once --auto
		--replicas= --lease-seconds=" ;;
	bakery-doctor) echo "--json --user= --min-free= --routes-file=
		--stripe-key-file= --max-lag=" ;;
	esac
}

_bakery_subcommands()
{
	case $1 in
	bakery-order) echo "place pay gateway show list events refunded" ;;
	bakery-dlq) echo "drain list show" ;;
	bakery-queue) echo "init send peek stats" ;;
	bakery-fault) echo "set clear list" ;;
	bakery-console) echo "user" ;;
	esac
}

# Runs a bakery program with the -H, -s and --queue typed so far; its
# errors are not the user's business while completing.
_bakery_run()
{
	"$@" "${_bakery_context[@]}" 2>/dev/null
}

# The first string field of each JSON line: "id" in `list` output.
_bakery_ids()
{
	sed -n 's/^{"id":"\([^"]*\)".*/\1/p'
}

_bakery()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local prog=${COMP_WORDS[0]##*/} start=1 i w sub=
	COMPREPLY=()
	if [[ $prog == bakery ]]; then
		if ((COMP_CWORD == 1)); then
			mapfile -t COMPREPLY < <(compgen -W "$_bakery_programs help -h --help -V --version" -- "$cur")
			return
		fi
		if [[ ${COMP_WORDS[1]} == help ]]; then
			((COMP_CWORD == 2)) &&
				mapfile -t COMPREPLY < <(compgen -W "$_bakery_programs" -- "$cur")
			return
		fi
		prog=bakery-${COMP_WORDS[1]}
		start=2
	fi
	local opts
	opts=$(_bakery_options "$prog")
	_bakery_context=()
	for ((i = start; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-H | --home | -s | --sandbox | --queue)
			_bakery_context+=("$w" "${COMP_WORDS[i+1]}")
			((i++)) ;;
		--home=* | --sandbox=* | --queue=*) _bakery_context+=("$w") ;;
		--*=*) ;;
		-*) [[ " $(echo $opts) " == *" $w= "* ]] && ((i++)) ;;
		*) [[ -z $sub ]] && sub=$w ;;
		esac
	done
	case $prev in
	-H | --home)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return ;;
	--prom | --stripe-key-file | --secret-file | --routes-file)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	--queue)
		mapfile -t COMPREPLY < <(compgen -W "sqlite: nats://" -- "$cur")
		return ;;
	--day)
		mapfile -t COMPREPLY < <(compgen -W "$(date -u +%F)" -- "$cur")
		return ;;
	--card)
		mapfile -t COMPREPLY < <(compgen -W "4242424242424242 4000000000000002
			4000000000009995" -- "$cur")
		return ;;
	--payment-method)
		mapfile -t COMPREPLY < <(compgen -W "pm_card_visa pm_card_chargeDeclined
			pm_card_chargeDeclinedInsufficientFunds" -- "$cur")
		return ;;
	-s | --sandbox | --customer | --delivery | --key | --batch | --max-retries | \
	--visibility | --retry-delay | --subscriber-timeout | --limit | --replicas | --max-age | --signature | \
	--tolerance | --max-body | --min-free | --lease-seconds | --max-lag)
		return ;;
	--user)
		mapfile -t COMPREPLY < <(compgen -u -- "$cur")
		return ;;
	esac
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "${opts//=/} $_bakery_common" -- "$cur")
		return
	fi
	local subs
	subs=$(_bakery_subcommands "$prog")
	if [[ -n $subs && -z $sub ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
		return
	fi
	local words=
	case $prog:$sub in
	bakery-order:pay | bakery-order:show | bakery-order:events)
		words=$(_bakery_run bakery-order list | _bakery_ids) ;;
	bakery-dlq:show | bakery-redrive:*)
		words=$(_bakery_run bakery-dlq list | _bakery_ids) ;;
	bakery-trace:*)
		words=$({ _bakery_run bakery-dlq list; _bakery_run bakery-order list; } | _bakery_ids) ;;
	bakery-show:* | bakery-relay:*)
		words=$(_bakery_run bakery-show --list | tr -d '"') ;;
	bakery-fault:set | bakery-fault:clear)
		# refuses:KIND for each built-in subscriber of the routes in effect.
		words="$(_bakery_run bakery-consume --routes |
			sed -n 's/.*"subscriber":"builtin:\([a-z0-9_.-]*\)".*/refuses:\1/p' |
			sort -u) queue-refuses" ;;
	bakery-order:gateway)
		words="test stripe" ;;
	bakery-console:user)
		# user's command, then an account of the home for passwd and del.
		case ${COMP_WORDS[COMP_CWORD-1]} in
		user) words="add passwd del list" ;;
		passwd | del)
			words=$(_bakery_run bakery-console user list |
				sed -n 's/^{"name":"\([^"]*\)".*/\1/p') ;;
		esac ;;
	bakery-backup:*)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return ;;
	bakery-order:place)
		# ITEM=QTY: the menu's items, the quantity typed next.
		words=$(sed -n 's/^\([a-z0-9-]*\)\t.*/\1=/p' \
			"${BAKERY_MENU:-/dev/null}" 2>/dev/null)
		compopt -o nospace 2>/dev/null ;;
	esac
	mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}

complete -F _bakery bakery bakery-order bakery-relay bakery-consume \
	bakery-dlq bakery-redrive bakery-queue bakery-fault bakery-show \
	bakery-status bakery-trace bakery-wipe bakery-webhook bakery-doctor \
	bakery-backup bakery-console bakery-standby
