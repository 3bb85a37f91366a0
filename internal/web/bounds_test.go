package web

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/publisher"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// The policy, the publisher and the page bound a group's count one way:
// over random limits, fleets (an Auto Scaling group's own MinSize and
// MaxSize above, below and across them, an ECS service's none), loads and
// pins, the count the policy decides is the count the publisher sets (dry
// run) and the page shows, within the bounds the page shows, never above
// a ceiling (max, cap, the group's own max), and a pin is held where the
// page says.
func TestPolicyPublisherAndPageAgreeOnTheBounds(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 51))
	small := func() int { return r.IntN(12) }
	now := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	refused := 0
	for i := range 3000 {
		// Valid configured limits, as config.Validate lets them through.
		lo := small()
		fc := config.Fleet{Min: lo}
		if r.IntN(3) > 0 {
			fc.Max = lo + small()
			if fc.Max == 0 {
				fc.Max = 1
			}
		}
		if r.IntN(2) == 0 {
			fc.Cap = lo + small()
			if fc.Cap == 0 {
				fc.Cap = 1
			}
		}
		g := config.Group{Name: fmt.Sprintf("g%d", i), Fleet: fc, Actions: config.Actions{SetDesiredCapacity: true}}
		f := model.Fleet{Known: true, Desired: small(), InService: small(), At: now}
		if r.IntN(4) > 0 {
			g.Fleet.AutoScalingGroup = &config.AutoScalingGroup{Name: "w", Region: "eu-west-1"}
			f.Kind, f.Min = model.KindAutoScaling, small()/2
			f.Max = f.Min + small()
		} else {
			g.Fleet.ECSService = &config.ECSService{Cluster: "c", Service: "w", Region: "eu-west-1"}
			f.Kind = "ecs"
		}
		s := policy.Settings{Group: g.Name, ServiceTime: time.Second, Latency: 30 * time.Second,
			Min: fc.Min, Max: fc.Max, Cap: fc.Cap, StaleAfter: time.Minute}
		if r.IntN(4) == 0 {
			s.Pinned, s.Pin = true, r.IntN(30)
		}
		visible := int64(r.IntN(5000))
		sample := model.GroupSample{Group: g.Name, At: now, Visible: visible, Backlog: visible, Queues: 1, Answered: 1}
		var st policy.State
		d := policy.Decide(s, sample, f, &st, now)

		pub, err := publisher.New(config.Config{DryRun: true, Groups: []config.Group{g}}, nil, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		act, err := pub.Apply(t.Context(), d, f)
		doc := groupOf(readmodel.GroupView{Settings: s, Fleet: f, Decision: &d}, now)
		b := doc.Bounds
		where := fmt.Sprintf("limits %+v, fleet %s %d..%d desired %d, pin %v %d, %d visible: decided %d, bounds %d..%v",
			fc, f.Kind, f.Min, f.Max, f.Desired, s.Pinned, s.Pin, visible, d.DesiredWorkers, b.Lo, b.Hi)
		if b.Refused {
			// The group's own MinSize above a ceiling: nothing can be set.
			refused++
			if err == nil || act.Scaled {
				t.Fatalf("%s: the publisher set %d (error %v), want a bounds conflict", where, act.To, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		set := act.To
		if !act.Scaled && d.DesiredWorkers != f.Desired && (!d.Held || d.DesiredWorkers >= f.Desired) {
			t.Fatalf("%s: the publisher set nothing", where)
		}
		if act.Scaled && set != d.DesiredWorkers {
			t.Fatalf("%s: the publisher sets %d, the policy decided %d", where, set, d.DesiredWorkers)
		}
		if doc.Decision.DesiredWorkers != d.DesiredWorkers {
			t.Fatalf("%s: the page shows %d", where, doc.Decision.DesiredWorkers)
		}
		for _, ceiling := range []int{fc.Max, fc.Cap, f.Max} {
			if (ceiling > 0 || ceiling == f.Max && f.Kind == model.KindAutoScaling) && d.DesiredWorkers > ceiling {
				t.Fatalf("%s: above the ceiling %d", where, ceiling)
			}
		}
		if d.DesiredWorkers < b.Lo || b.Hi != nil && d.DesiredWorkers > *b.Hi {
			t.Fatalf("%s: outside the bounds the page shows", where)
		}
		if s.Pinned {
			want := s.Limits().For(f).Clamp(s.Pin)
			if d.DesiredWorkers != want {
				t.Fatalf("%s: pinned, decided %d, want %d", where, d.DesiredWorkers, want)
			}
			notes := strings.Join(doc.Switches, " ")
			if want != s.Pin && !strings.Contains(notes, fmt.Sprintf("held at %d", want)) {
				t.Fatalf("%s: the page says %q", where, notes)
			}
		}
	}
	if refused == 0 {
		t.Error("no group's own MinSize above a ceiling: the case is not tried")
	}
}
