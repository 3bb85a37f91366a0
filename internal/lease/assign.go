// How the groups are shared out: pure functions of what one checker knows
// at a sync, so that every checker computes the same assignment from the
// same table, and so that the rules are tested without a table.

package lease

import (
	"math"
	"slices"
	"strconv"
	"time"
)

// view is what one checker knows at a sync.
type view struct {
	self   string
	groups []string        // the groups it serves, sorted
	held   map[string]bool // the groups whose lease it holds
	items  map[string]item // the table as scanned, by item key
	// peers are the live checkers, by the end of their heartbeat; self
	// included.
	peers map[string]time.Time
	// freeSince is when each free group served was first seen free.
	freeSince map[string]time.Time
	interval  time.Duration
	now       time.Time
}

// claim is a lease to take: the group, its counter as seen (-1: no
// item), when the taker may act (the end of the previous owner's lease),
// and why it is taken.
type claim struct {
	group  string
	seen   int64
	from   time.Time
	reason string
}

// live reports whether a group's lease is held by someone now.
func (v view) live(g string) (item, bool) {
	it, ok := v.items[groupPrefix+g]
	return it, ok && it.owner != "" && it.expires.After(v.now)
}

// counts returns the number of live leases of each live checker, this one
// included, among the groups served. A lease whose owner has no live
// heartbeat counts for nobody: a peer can only hold what it renews.
func (v view) counts() map[string]int {
	counts := make(map[string]int, len(v.peers)+1)
	for p := range v.peers {
		counts[p] = 0
	}
	counts[v.self] = 0
	for _, g := range v.groups {
		if v.held[g] {
			counts[v.self]++
			continue
		}
		it, ok := v.live(g)
		if !ok {
			continue
		}
		if _, peer := counts[it.owner]; peer {
			counts[it.owner]++
		}
	}
	return counts
}

// share is the number of groups each live checker should hold.
func share(groups, peers int) int {
	return int(math.Ceil(float64(groups) / float64(max(peers, 1))))
}

// assign returns the free and expired leases this checker takes. Every
// checker assigns the free leases the same way from the same table, each
// in turn to the checker holding fewest (the first in name order among
// equals), so that they rarely race for one; a lease its assignee has left
// free for more than an interval goes to whoever is below its share.
func assign(v view) []claim {
	counts := v.counts()
	peers := make([]string, 0, len(counts))
	for p := range counts {
		peers = append(peers, p)
	}
	slices.Sort(peers)
	fair := share(len(v.groups), len(peers))
	var out []claim
	for _, g := range v.groups {
		if v.held[g] {
			continue
		}
		if _, taken := v.live(g); taken {
			continue
		}
		to := peers[0]
		for _, p := range peers[1:] {
			if counts[p] < counts[to] {
				to = p
			}
		}
		counts[to]++
		since, seen := v.freeSince[g]
		overdue := seen && v.now.Sub(since) > v.interval && counts[v.self] < fair
		if to != v.self && !overdue {
			continue
		}
		if to != v.self {
			counts[to]--
			counts[v.self]++
		}
		it, ok := v.items[groupPrefix+g]
		c := claim{group: g, seen: -1, from: v.now, reason: ReasonAcquired}
		if ok {
			c.seen = it.counter
			if it.owner != "" && it.expires.After(c.from) {
				c.from = it.expires
			}
		}
		out = append(out, c)
	}
	return out
}

// steal returns one lease to take from the checker holding most, when it
// holds at least two more than this one and this one is below its share.
// A taken lease narrows the gap by two, so the two never take leases back
// and forth. The victim's lease taken is the one that ranks last for this
// checker: a spread choice that two stealers rarely share.
func steal(v view) (claim, bool) {
	counts := v.counts()
	mine := counts[v.self]
	victim := ""
	for p, n := range counts {
		if p != v.self && n >= mine+2 && (victim == "" || n > counts[victim] || (n == counts[victim] && p < victim)) {
			victim = p
		}
	}
	if victim == "" || mine >= share(len(v.groups), len(counts)) {
		return claim{}, false
	}
	var pick, pickRank string
	for _, g := range v.groups {
		it, ok := v.live(g)
		if !ok || it.owner != victim {
			continue
		}
		if r := rank(v.self, g); pick == "" || r > pickRank {
			pick, pickRank = g, r
		}
	}
	if pick == "" {
		return claim{}, false
	}
	it := v.items[groupPrefix+pick]
	return claim{group: pick, seen: it.counter, from: it.expires, reason: ReasonStolen}, true
}

// rank orders groups differently for each checker (FNV-1a of the two
// names).
func rank(id, group string) string {
	var h uint64 = 14695981039346656037
	for _, b := range []byte(id + "\x00" + group) {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return strconv.FormatUint(h, 16)
}
