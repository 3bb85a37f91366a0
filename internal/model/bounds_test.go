package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// asg is an Auto Scaling group read with MinSize lo and MaxSize hi.
func asg(lo, hi int) Fleet { return Fleet{Kind: KindAutoScaling, Known: true, Min: lo, Max: hi} }

func TestLimitsFor(t *testing.T) {
	t.Parallel()
	ecs := Fleet{Kind: "ecs", Known: true}
	tests := []struct {
		name    string
		l       Limits
		f       Fleet
		want    Bounds
		clamped [3]int // Clamp of -5, 7 and a huge count
	}{
		{"none", Limits{}, Fleet{}, Bounds{Hi: math.MaxInt}, [3]int{0, 7, math.MaxInt}},
		{"max", Limits{Min: 2, Max: 10}, Fleet{}, Bounds{Lo: 2, Hi: 10, HiBy: "max", LoBy: "min", Floor: 2}, [3]int{2, 7, 10}},
		{"the group's own max below max", Limits{Min: 2, Max: 10}, asg(0, 6), Bounds{Lo: 2, Hi: 6, HiBy: "group's max", LoBy: "min", Floor: 2}, [3]int{2, 6, 6}},
		{"an Auto Scaling group's MaxSize of 0 holds it at zero", Limits{Max: 10}, asg(0, 0), Bounds{Hi: 0, HiBy: "group's max"}, [3]int{0, 0, 0}},
		{"an ECS service's 0 and 0 are no bounds", Limits{Max: 10}, ecs, Bounds{Hi: 10, HiBy: "max"}, [3]int{0, 7, 10}},
		{"a fleet not read has no bounds of its own", Limits{Max: 10}, Fleet{Kind: KindAutoScaling, Min: 9, Max: 1}, Bounds{Hi: 10, HiBy: "max"}, [3]int{0, 7, 10}},
		{"a simulated fleet's max", Limits{Max: 10}, Fleet{Kind: "simulated", Known: true, Min: 1, Max: 8}, Bounds{Lo: 1, Hi: 8, HiBy: "group's max", LoBy: "group's min", Floor: 1}, [3]int{1, 7, 8}},
		{"the group's own max equal to max: max", Limits{Max: 10}, asg(0, 10), Bounds{Hi: 10, HiBy: "max"}, [3]int{0, 7, 10}},
		{"cap below both", Limits{Max: 10, Cap: 4}, asg(0, 6), Bounds{Hi: 4, HiBy: "cap"}, [3]int{0, 4, 4}},
		{"a cap equal to the group's max: cap", Limits{Max: 10, Cap: 6}, asg(0, 6), Bounds{Hi: 6, HiBy: "cap"}, [3]int{0, 6, 6}},
		{"a cap above max binds nothing", Limits{Max: 10, Cap: 12}, Fleet{}, Bounds{Hi: 10, HiBy: "max"}, [3]int{0, 7, 10}},
		{"negative min", Limits{Min: -3, Max: 5}, Fleet{}, Bounds{Hi: 5, HiBy: "max"}, [3]int{0, 5, 5}},
		{"the group's own min above min", Limits{Min: 2, Max: 10}, asg(4, 10), Bounds{Lo: 4, Hi: 10, HiBy: "max", LoBy: "group's min", Floor: 4}, [3]int{4, 7, 10}},
		{"min above the group's own max: the ceiling wins", Limits{Min: 8, Max: 10}, asg(0, 5), Bounds{Lo: 5, Hi: 5, HiBy: "group's max", LoBy: "min", Floor: 8, Crossed: true}, [3]int{5, 5, 5}},
		{"min above the cap: the cap wins", Limits{Min: 5, Max: 10, Cap: 3}, Fleet{}, Bounds{Lo: 3, Hi: 3, HiBy: "cap", LoBy: "min", Floor: 5, Crossed: true}, [3]int{3, 3, 3}},
		{"the group's own min above the cap: refused", Limits{Max: 10, Cap: 2}, asg(3, 5), Bounds{Lo: 2, Hi: 2, HiBy: "cap", LoBy: "group's min", Floor: 3, Crossed: true, Refused: true}, [3]int{2, 2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.l.For(tt.f)
			if got != tt.want {
				t.Errorf("%+v.For(%+v) = %+v, want %+v", tt.l, tt.f, got, tt.want)
			}
			for i, n := range [3]int{-5, 7, math.MaxInt} {
				if c := got.Clamp(n); c != tt.clamped[i] {
					t.Errorf("Clamp(%d) = %d, want %d", n, c, tt.clamped[i])
				}
			}
		})
	}
}

// No count, limits or fleet, however wrong, gives a clamped count above
// a ceiling (max, cap, the group's own max), nor below a floor (min, the
// group's own min) unless that floor is above a ceiling, where the count
// is the lowest ceiling; the bounds never cross.
func TestPropertyBoundsNeverExceedACeiling(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	ints := []int{math.MinInt, -3, -1, 0, 0, 1, 2, 3, 5, 8, 13, 100, math.MaxInt}
	pick := func() int {
		if r.IntN(3) == 0 {
			return r.IntN(20)
		}
		return ints[r.IntN(len(ints))]
	}
	kinds := []string{"", KindAutoScaling, "ecs", "kubernetes", "simulated"}
	for range 200_000 {
		l := Limits{Min: pick(), Max: pick(), Cap: pick()}
		f := Fleet{Kind: kinds[r.IntN(len(kinds))], Known: r.IntN(4) != 0, Min: pick(), Max: pick()}
		n := pick()
		b := l.For(f)
		got := b.Clamp(n)
		if b.Lo > b.Hi {
			t.Fatalf("%+v on %+v: bounds %d..%d cross", l, f, b.Lo, b.Hi)
		}
		// The ceilings and floors, worked out here from the inputs.
		ceilings := []int{}
		if l.Max > 0 {
			ceilings = append(ceilings, l.Max)
		}
		if l.Cap > 0 {
			ceilings = append(ceilings, l.Cap)
		}
		floors := []int{l.Min}
		if f.Known {
			floors = append(floors, f.Min)
			if f.Max > 0 || f.Kind == KindAutoScaling {
				ceilings = append(ceilings, max(f.Max, 0))
			}
		}
		lowest := math.MaxInt
		for _, c := range ceilings {
			lowest = min(lowest, c)
		}
		if got > lowest || got < 0 {
			t.Fatalf("%+v on %+v: Clamp(%d) = %d, above a ceiling (%d) or below 0", l, f, n, got, lowest)
		}
		for _, fl := range floors {
			if fl <= lowest && got < fl {
				t.Fatalf("%+v on %+v: Clamp(%d) = %d, below the floor %d", l, f, n, got, fl)
			}
			if fl > lowest && got != lowest {
				t.Fatalf("%+v on %+v: Clamp(%d) = %d: a floor %d above the ceiling %d, want the ceiling", l, f, n, got, fl, lowest)
			}
		}
		if n >= b.Lo && n <= b.Hi && got != n {
			t.Fatalf("%+v on %+v: Clamp(%d) = %d moved a count within %d..%d", l, f, n, got, b.Lo, b.Hi)
		}
	}
}
