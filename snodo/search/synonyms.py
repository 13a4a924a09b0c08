"""The words people and models use for what tools do, and the words tools use.

A query says "get rid of", "bounce", "jot down", "PR" or "DM" where a tool says delete,
restart, note, pull request, direct message. Each line of ``GROUPS`` is a set of words
that mean the same thing to a tool catalog (any of them found in a query also looks for
the others, with less weight than the word itself); each line of ``PARAPHRASES`` maps a
word or phrase of a query to the words a tool would use, one way only (``bounce`` is a
restart, a restart is not a bounce). The vocabulary is of tools in general (files,
messages, calendars, issues, code, data, money, customers, machines, documents,
places, people), not of any one catalog.

Each entry is matched on folded words; single words also on their stems.
"""

from __future__ import annotations

from functools import lru_cache

from snodo.search.text import STOPWORDS, TIME_WORDS, fold, stem, words

__all__ = ["Expansions", "expansions", "families"]

GROUPS = """
delete, remove, erase, trash, discard, purge, destroy, wipe, drop
create, add, new, make, generate, insert
get, fetch, retrieve, obtain, pull, grab, pull up, bring up, look up
show, display, view, see, check, inspect
list, enumerate, browse, all
search, find, lookup, locate, seek, grep, look for
update, edit, modify, change, alter, amend, patch, adjust, tweak
send, deliver, dispatch
reply, respond, answer
cancel, abort, revoke, terminate
start, begin, launch, trigger, run, execute, kick
stop, halt, shutdown, kill
restart, reboot, relaunch, bounce, recycle
move, relocate, transfer, rename
copy, duplicate, clone
schedule, book, reserve, arrange
approve, accept, confirm, lgtm
decline, reject, deny, refuse
close, resolve, finish, complete, done
email, mail, e-mail, inbox
issue, bug, ticket, defect, story
task, todo, to-do, chore
meeting, event, appointment, invite, invitation, call, sync, standup, stand-up, one on one, catch-up
folder, directory, dir
document, doc, docs
repository, repo, repos
pull request, pr, merge request, mr
instance, vm, virtual machine, machine, server, host, box, node
database, db
kubernetes, k8s, kube
contact, person, people, lead
customer, client
company, account, organization, organisation, org, firm, business
deal, opportunity, opp
invoice, bill
payment, charge, transaction, transactions, revenue
subscription, plan, membership
employee, staff, colleague, coworker, co-worker, teammate, worker
vacation, leave, holiday, pto, time off, day off, days off
payslip, pay slip, paystub, pay stub, salary, wage
weather, forecast, temperature
hotel, accommodation, lodging, motel
flight, flights, airfare, plane, fly, airline
place, restaurant, cafe, bar, shop, store, spot, nearby
coordinates, latitude, longitude, lat, lng, lon
directions, route, navigate, navigation
timezone, time zone
currency, exchange rate, forex
log, logs, logging
metric, metrics, stats, statistics, throughput, latency, usage
alert, alarm, pager, page, monitor, monitoring
deploy, release, ship, rollout, roll out, publish
rollback, roll back, revert, undo
backup, snapshot, dump
restore, recover
csv, spreadsheet
sql, select
column, columns, field, fields, schema
row, rows, record, records, entry, entries
direct message, dm, private message
status, presence
reaction, react, emoji
sms, text message
currency, euro, euros, dollar, dollars, usd, eur, gbp, yen, pound sterling
reminder, remind
free, available, availability, slot
note, notes, memo
wiki, confluence, knowledge base, kb
compress, zip, bundle, pack, archive, tarball
extract, unzip, decompress, unpack, uncompress
info, metadata, details, properties, size
read, open, contents, content, cat
write, save, store
spam, junk
filter, rule
auto reply, out of office, ooo, autoresponder, vacation responder
diff, changes
commit, commits, history
workflow, pipeline, ci, build, job
code, source, codebase, source code
expense, reimbursement, reimburse, receipt, claim, expense report
onboard, onboarding, hire, new hire, joiner, start date
opening, position, vacancy, job opening, hiring, positions
manager, boss, supervisor, reports to
balance, funds
coupon, discount, promo
link, relate
assign, give, delegate, hand, reassign
comment, remark
sprint, iteration
project, projects
channel, channels
message, messages, post
upload, attach
share, access, permission, permissions
download, fetch url
summary, report
overdue, unpaid, outstanding, past due
lead, prospect
owner, rep, sales rep, salesperson
merge, dedupe, deduplicate
weather, rain, raining, snow, snowing, sunny, cloudy, windy, storm, humid, humidity
air quality, pollution, smog, aqi
transit, bus, train, subway, metro, public transport
bicycling, bike, biking, cycle, cycling
walking, walk, on foot
checklist, task list, todo list
append, add to the end
candidate, applicant, interviewee
url, link, web address, website, site, webpage
calendar, agenda
"""
"""Words that mean the same to a tool catalog, one set a line."""

PARAPHRASES = """
get rid of => delete
look at => show read
what's on => list
what is on => list
ping => message notify
any => search list
count => query sql
owe => unpaid invoice
owes => unpaid invoice
owed => unpaid invoice
money ~> payment amount balance
cash ~> payment amount balance
price ~> amount price
cost ~> amount price
fee ~> amount charge
contract ~> file document
report ~> file document report
spreadsheet ~> file csv
slides ~> file document
deck ~> file document
presentation ~> file document
photo ~> file image
picture ~> file image
screenshot ~> file image
video ~> file
recording ~> file
resume ~> file document
letter ~> document
engineer ~> employee person job
engineers ~> employee person job
designer ~> employee person job
developer ~> employee person job
colleague ~> employee person
team ~> employee people channel
gpu ~> instance machine
cluster ~> instance kubernetes
postpone => update event
push back => update event
delay => update
rsvp => respond invitation
announce => post message
announcement => post message
report a bug => create issue
raise a ticket => create ticket
log a bug => create issue
track time => log work
time spent => log work
worklog => log work
rerun => trigger run
re-run => trigger run
upgrade => update subscription
downgrade => update subscription
provision => create instance
notify me when => alert
let me know when => alert
get to => directions
how far => directions
route to => directions
what time is it in => timezone convert
local time => timezone
days left => balance
remaining => balance
sick day => sick time off
sick days => sick time off
nuke => delete
file a bug => create issue
file an issue => create issue
file a ticket => create ticket
leave a comment => add comment
leave a note => add note
where => search
schedule => create event
show => list get
throw away => delete
clean up => delete
jot down => create note
write down => create note
note down => create note
spin up => create start instance
fire up => start
turn on => start
power on => start
boot => start
shut down => stop
turn off => stop
power off => stop
kick off => start trigger
set up => create schedule
sign up => create subscription
tick off => complete
check off => complete
cross off => complete
mark done => complete
money back => refund
give back => refund
pay back => refund
bill => invoice charge
charge => payment
reimbursed => expense reimburse
report to => manager org chart
reports to => manager org chart
out of office => auto reply
dm => direct message
pr => pull request
prs => pull request
mr => pull request
vm => instance
vms => instance
ci => workflow run
k8s => kubernetes
pod => kubernetes pod
pods => kubernetes pod
commute => directions
latency => metrics
error rate => metrics alert
"""
"""A word or phrase of a query, and the words a tool would use for it (``=>``), or the
words for what it is a kind of (``~>``)."""

FAMILIES = """
read: get, show, list, search, find, read, view, look, lookup, fetch, retrieve, describe
read: check, display, browse, see
create: create, add, new, make, generate, insert
delete: delete, remove, erase, trash, discard, purge, destroy, wipe, drop
update: update, edit, modify, change, alter, rename, move, patch, link, assign
update: transition, mark, merge, set
"""
"""Actions that exclude each other: a query that reads is not asking for a tool that
creates, deletes or updates, whatever the object."""

Expansions = dict[str, float]
"""Stems a query word brings with it, each with its weight."""

SYNONYM_WEIGHT = 0.7
"""The weight of a word found through ``GROUPS``, the query's own word being 1."""
PARAPHRASE_WEIGHT = 0.8
"""The weight of a word found through ``PARAPHRASES``."""
PHRASE_PART = 0.8
"""What each word of a phrase a word brings weighs, as a share of the phrase's weight."""
KIND_WEIGHT = 0.5
"""The weight of a word found through a ``~>`` line of ``PARAPHRASES``: what the query
names is a kind of it (a screenshot is a file), which says less of the tool."""


def _weak(word_stem: str) -> bool:
    return len(word_stem) < 3 or word_stem in _weak_stems()


@lru_cache(maxsize=1)
def _weak_stems() -> frozenset[str]:
    return frozenset(stem(w) for w in (*STOPWORDS, *TIME_WORDS, "off", "out", "up", "down"))


def _phrase(text: str) -> tuple[str, ...]:
    return tuple(stem(word) for word in words(fold(text)))


@lru_cache(maxsize=1)
def tables() -> tuple[dict[tuple[str, ...], Expansions], int]:
    """Each phrase (as stems) and the stems it brings; the longest phrase's length."""
    found: dict[tuple[str, ...], Expansions] = {}

    def add(key: tuple[str, ...], targets: list[tuple[str, ...]], weight: float) -> None:
        if not key:
            return
        entry = found.setdefault(key, {})
        for target in targets:
            # A phrase's words each bring less, and its short and function words nothing
            # (``time off`` is not any time, ``e-mail`` no ``e``).
            share = weight if len(target) == 1 else weight * PHRASE_PART
            for target_stem in target:
                if len(target) > 1 and _weak(target_stem):
                    continue
                if entry.get(target_stem, 0.0) < share and target_stem not in key:
                    entry[target_stem] = share

    for line in GROUPS.strip().splitlines():
        members = [_phrase(part) for part in line.split(",")]
        for member in members:
            add(member, [other for other in members if other != member], SYNONYM_WEIGHT)
            if len(member) > 1:  # a phrase of a group still means its own words
                entry = found[member]
                for own in member:
                    entry[own] = max(entry.get(own, 0.0), PARAPHRASE_WEIGHT)
    for line in PARAPHRASES.strip().splitlines():
        if "~>" in line:
            source, _, target = line.partition("~>")
            add(_phrase(source), [_phrase(target)], KIND_WEIGHT)
        else:
            source, _, target = line.partition("=>")
            add(_phrase(source), [_phrase(target)], PARAPHRASE_WEIGHT)
    longest = max(len(key) for key in found)
    return found, longest


def expansions(stems: list[str]) -> list[tuple[int, int, Expansions]]:
    """The phrases of ``GROUPS`` and ``PARAPHRASES`` in a query's stems: (start, end,
    what they bring), longest first at each position, without overlaps of one
    length at the same place."""
    table, longest = tables()
    found: list[tuple[int, int, Expansions]] = []
    for start in range(len(stems)):
        for size in range(min(longest, len(stems) - start), 0, -1):
            brought = table.get(tuple(stems[start : start + size]))
            if brought is not None:
                found.append((start, start + size, brought))
    return found


@lru_cache(maxsize=1)
def families() -> dict[str, str]:
    """Each action stem of ``FAMILIES`` and its family."""
    found: dict[str, str] = {}
    for line in FAMILIES.strip().splitlines():
        family, _, members = line.partition(":")
        for member in members.split(","):
            found[stem(fold(member.strip()))] = family
    return found
