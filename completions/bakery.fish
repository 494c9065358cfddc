# fish completion for bakery's programs; see bakery(7).

set -l __bakery_programs bakery-order bakery-relay bakery-consume bakery-dlq \
	bakery-redrive bakery-queue bakery-fault bakery-show bakery-status \
	bakery-trace bakery-wipe bakery-webhook bakery-doctor bakery-backup \
	bakery-console bakery-standby

# Runs a bakery program quietly with the -H, -s and --queue typed so far.
function __bakery_run
	set -l ctx
	set -l words (commandline -opc)
	for i in (seq 2 (count $words))
		switch $words[$i]
			case -H --home -s --sandbox --queue
				set -a ctx $words[$i] $words[(math $i + 1)]
			case '--home=*' '--sandbox=*' '--queue=*'
				set -a ctx $words[$i]
		end
	end
	$argv $ctx 2>/dev/null
end

function __bakery_ids
	sed -n 's/^{"id":"\([^"]*\)".*/\1/p'
end

for p in bakery $__bakery_programs
	complete -c $p -s h -l help -d 'show the usage'
	complete -c $p -s V -l version -d 'show the versions'
	complete -c $p -s H -l home -r -a '(__fish_complete_directories)' -d 'state folder'
	complete -c $p -s s -l sandbox -x -d sandbox
	complete -c $p -l queue -x -a 'sqlite: nats://' -d 'queue URL'
	complete -c $p -s q -l quiet -d 'log errors only'
	complete -c $p -s v -l verbose -d 'log more'
end

complete -c bakery -n __fish_use_subcommand -f -a 'order relay consume dlq redrive queue fault show status trace wipe webhook doctor backup console standby'
complete -c bakery -n __fish_use_subcommand -f -a help -d 'show a page'
complete -c bakery -n '__fish_seen_subcommand_from help' -f -a 'order relay consume dlq redrive queue fault show status trace wipe webhook doctor backup console standby'

set -l order_cmds place pay gateway show list events refunded
complete -c bakery-order -f -n "not __fish_seen_subcommand_from $order_cmds" -a "$order_cmds"
complete -c bakery-order -f -n '__fish_seen_subcommand_from gateway' -a 'test stripe'
complete -c bakery-order -f -n '__fish_seen_subcommand_from pay show events' -a '(__bakery_run bakery-order list | __bakery_ids)'
complete -c bakery-order -l customer -x -d customer
complete -c bakery-order -l batch -d 'JSON commands on stdin, one a line'
complete -c bakery-order -l day -x -d 'YYYY-MM-DD'
complete -c bakery-order -l delivery -x -d 'deliver to'
complete -c bakery-order -l key -x -d 'idempotency key'
complete -c bakery-order -l card -x -a '4242424242424242 4000000000000002 4000000000009995' -d 'test card'
complete -c bakery-order -l payment-method -x -a 'pm_card_visa pm_card_chargeDeclined pm_card_chargeDeclinedInsufficientFunds' -d 'Stripe payment method'
complete -c bakery-order -l stripe-key-file -r -d 'file with the Stripe key'

complete -c bakery-relay -f -a '(__bakery_run bakery-show --list | tr -d \'"\')'
complete -c bakery-relay -l all -d 'every object'
complete -c bakery-relay -l due -d 'fire due alarms'
complete -c bakery-relay -l watch -d 'fire alarms as a service'

complete -c bakery-consume -f
complete -c bakery-consume -l drain -d 'until the queue is empty'
complete -c bakery-consume -l once -d 'one batch'
complete -c bakery-consume -l follow -d 'keep consuming'
complete -c bakery-consume -l batch -x -d 'messages per batch'
complete -c bakery-consume -l max-retries -x -d 'retries before the DLQ'
complete -c bakery-consume -l visibility -x -d 'lease seconds'
complete -c bakery-consume -l retry-delay -x -d 'seconds before a retry'
complete -c bakery-consume -l stdin -d 'deliver envelopes from stdin'
complete -c bakery-consume -l routes -d 'print the routes in effect'
complete -c bakery-consume -l routes-file -r -d 'routes file'
complete -c bakery-consume -l subscriber-timeout -x -d 'seconds a program or webhook may take'

set -l dlq_cmds drain list show
complete -c bakery-dlq -f -n "not __fish_seen_subcommand_from $dlq_cmds" -a "$dlq_cmds"
complete -c bakery-dlq -f -n '__fish_seen_subcommand_from show' -a '(__bakery_run bakery-dlq list | __bakery_ids)'
complete -c bakery-dlq -l follow -d 'keep draining'

complete -c bakery-redrive -f -a '(__bakery_run bakery-dlq list | __bakery_ids)'
complete -c bakery-redrive -l all -d 'every dead letter'

set -l queue_cmds init send peek stats
complete -c bakery-queue -f -n "not __fish_seen_subcommand_from $queue_cmds" -a "$queue_cmds"
complete -c bakery-queue -l dlq -d 'the dead-letter queue'
complete -c bakery-queue -l limit -x -d messages
complete -c bakery-queue -l replicas -x -d 'streams on NATS'

set -l fault_cmds set clear list
complete -c bakery-fault -f -n "not __fish_seen_subcommand_from $fault_cmds" -a "$fault_cmds"
complete -c bakery-fault -f -n '__fish_seen_subcommand_from set clear' -a '(__bakery_run bakery-consume --routes | string replace -rf \'.*"subscriber":"builtin:([a-z0-9_.-]*)".*\' \'refuses:$1\' | sort -u) queue-refuses'

complete -c bakery-show -f -a '(__bakery_run bakery-show --list | tr -d \'"\')'
complete -c bakery-show -l list -d 'list the objects'
complete -c bakery-show -l rows -x -a 'holds reservations stops orders receipts' -d 'one list of the object, a record a line'
complete -c bakery-show -l after -x -d 'with --rows: after the record of an order'
complete -c bakery-show -l limit -x -d 'with --rows: at most N records'

complete -c bakery-status -f
complete -c bakery-status -l json -d 'one JSON object'
complete -c bakery-status -l prom -r -d 'Prometheus textfile'
complete -c bakery-status -l max-age -x -d 'outbox age that needs attention'

complete -c bakery-trace -f -a '(__bakery_run bakery-dlq list | __bakery_ids)'
complete -c bakery-trace -f -a '(__bakery_run bakery-order list | __bakery_ids)'
complete -c bakery-trace -l json -d 'one JSON object'

complete -c bakery-wipe -f
complete -c bakery-wipe -l all -d 'wipe every sandbox'
complete -c bakery-wipe -l dry-run -d 'print what would go, remove nothing'
complete -c bakery-wipe -l resume -d 'only finish an unfinished wipe'
complete -c bakery-wipe -l daily -d "the timer's wipe: none if one started today"

complete -c bakery-webhook -f
complete -c bakery-webhook -l signature -x -d 'Stripe-Signature header'
complete -c bakery-webhook -l secret-file -r -d 'webhook secret file'
complete -c bakery-webhook -l tolerance -x -d seconds
complete -c bakery-webhook -l max-body -x -d bytes

complete -c bakery-doctor -f
complete -c bakery-doctor -l json -d 'a JSON line per check'
complete -c bakery-doctor -l user -x -a '(__fish_complete_users)' -d 'who must write the home'
complete -c bakery-doctor -l min-free -x -d 'free space below which disk fails (100M)'
complete -c bakery-doctor -l max-lag -x -d 'a standby further behind fails replica (60 s)'
complete -c bakery-doctor -l routes-file -r -d 'routes file'
complete -c bakery-doctor -l stripe-key-file -r -d 'file with the Stripe key'

complete -c bakery-backup -x -a '(__fish_complete_directories)' -d 'new folder for the copy'

complete -c bakery-console -f -n 'not __fish_seen_subcommand_from user' -a user
complete -c bakery-console -f -n '__fish_seen_subcommand_from user; and not __fish_seen_subcommand_from add passwd del list' -a 'add passwd del list'
complete -c bakery-console -f -n '__fish_seen_subcommand_from passwd del' -a '(__bakery_run bakery-console user list | sed -n \'s/^{"name":"\([^"]*\)".*/\1/p\')'
complete -c bakery-console -l operator -d 'the new account sees every sandbox'

complete -c bakery-standby -f
complete -c bakery-standby -l primary -d 'make this home the primary'
complete -c bakery-standby -l standby -d 'make this empty home a standby'
complete -c bakery-standby -l promote -d 'make this standby the primary'
complete -c bakery-standby -l once -d 'apply what the stream holds, then stop'
complete -c bakery-standby -l auto -d 'wait for the lease to end, then take it'
complete -c bakery-standby -l replicas -x -a '1 2 3' -d "the stream's replicas"
complete -c bakery-standby -l lease-seconds -x -d "the primary's lease, seconds"
