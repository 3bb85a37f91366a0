package lease

import (
	"slices"
	"testing"
	"time"
)

// The assignment rules, without a table: what one checker takes from
// what it knows.
func TestAssign(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 0, 0, 10, 0, time.UTC)
	live := now.Add(2 * time.Second)
	peers := func(ids ...string) map[string]time.Time {
		m := map[string]time.Time{}
		for _, id := range ids {
			m[id] = live
		}
		return m
	}
	lease := func(owner string, counter int64, exp time.Time) item {
		return item{owner: owner, session: "s", counter: counter, expires: exp}
	}
	groups := []string{"g0", "g1", "g2", "g3"}
	cases := []struct {
		name string
		v    view
		want []claim
	}{{
		name: "free groups alternate between two checkers, fewest first, names breaking ties",
		v:    view{self: "a", groups: groups, peers: peers("a", "b")},
		want: []claim{{"g0", -1, now, ReasonAcquired}, {"g2", -1, now, ReasonAcquired}},
	}, {
		name: "the other checker's turn",
		v:    view{self: "b", groups: groups, peers: peers("a", "b")},
		want: []claim{{"g1", -1, now, ReasonAcquired}, {"g3", -1, now, ReasonAcquired}},
	}, {
		name: "a group its assignee left free for more than an interval goes to one below its share",
		v: view{self: "a", groups: groups, peers: peers("a", "b"), interval: time.Second,
			freeSince: map[string]time.Time{"g1": now.Add(-3 * time.Second), "g3": now}},
		want: []claim{{"g0", -1, now, ReasonAcquired}, {"g1", -1, now, ReasonAcquired}},
	}, {
		name: "expired leases are taken on their counter, held ones kept, live ones of others left",
		v: view{self: "a", groups: groups, peers: peers("a", "b"), held: map[string]bool{"g0": true},
			items: map[string]item{
				groupPrefix + "g0": lease("a", 4, live),
				groupPrefix + "g1": lease("b", 7, live),
				groupPrefix + "g2": lease("b", 9, now.Add(-time.Millisecond)),
				groupPrefix + "g3": lease("", 2, now),
			}},
		// a holds 1, b 1: g2 goes to a (tie, name order), g3 to b.
		want: []claim{{"g2", 9, now, ReasonAcquired}},
	}, {
		name: "a live lease of a checker with no heartbeat counts for nobody, and is waited out",
		v: view{self: "a", groups: groups[:2], peers: peers("a"),
			items: map[string]item{groupPrefix + "g0": lease("gone", 3, live)}},
		want: []claim{{"g1", -1, now, ReasonAcquired}},
	}, {
		name: "an item with no numeric counter is taken on that condition",
		v: view{self: "a", groups: groups[:1], peers: peers("a"),
			items: map[string]item{groupPrefix + "g0": {counter: counterMalformed}}},
		want: []claim{{"g0", counterMalformed, now, ReasonAcquired}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.v.now = now
			got := assign(c.v)
			if !slices.Equal(got, c.want) {
				t.Errorf("assign = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestSteal(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 0, 0, 10, 0, time.UTC)
	exp := now.Add(2 * time.Second)
	groups := []string{"g0", "g1", "g2", "g3", "g4", "g5"}
	table := func(owners ...string) map[string]item {
		m := map[string]item{}
		for i, o := range owners {
			m[groupPrefix+groups[i]] = item{owner: o, counter: int64(10 + i), expires: exp}
		}
		return m
	}
	held := func(items map[string]item, self string) map[string]bool {
		h := map[string]bool{}
		for k, it := range items {
			if it.owner == self {
				h[k[len(groupPrefix):]] = true
			}
		}
		return h
	}
	peers := map[string]time.Time{"a": exp, "b": exp, "c": exp}
	cases := []struct {
		name   string
		owners []string
		want   bool
	}{
		{"none held: below share, and b holds two more", []string{"b", "b", "b", "b", "c", "c"}, true},
		{"one held, b three: the gap is two", []string{"a", "b", "b", "b", "c", "c"}, true},
		{"at the share: no steal", []string{"a", "a", "b", "b", "c", "c"}, false},
		{"a gap of one: no steal, no ping-pong", []string{"a", "b", "b", "c", "c"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items := table(c.owners...)
			v := view{self: "a", groups: groups, items: items, held: held(items, "a"), peers: peers, now: now}
			got, ok := steal(v)
			if ok != c.want {
				t.Fatalf("steal = %+v, %v; want a steal: %v", got, ok, c.want)
			}
			if !ok {
				return
			}
			it := items[groupPrefix+got.group]
			most := "b"
			if it.owner != most || got.seen != it.counter || !got.from.Equal(exp) || got.reason != ReasonStolen {
				t.Errorf("steal = %+v, want one of %s's leases (counter as seen, acting from its expiry)", got, most)
			}
			// Another checker in a's place picks by its own rank: the
			// choice is spread, and still one of b's.
			v.self = "z"
			v.peers = map[string]time.Time{"z": exp, "b": exp, "c": exp}
			v.held = map[string]bool{}
			for i, o := range c.owners {
				if o == "a" {
					v.items[groupPrefix+groups[i]] = item{owner: "z", counter: int64(10 + i), expires: exp}
					v.held[groups[i]] = true
				}
			}
			if z, ok := steal(v); !ok || v.items[groupPrefix+z.group].owner != "b" {
				t.Errorf("z steals %+v, %v; want one of b's", z, ok)
			}
		})
	}
}
