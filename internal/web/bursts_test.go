package web

import (
	"testing"

	"github.com/queuechecker/queue-checker/internal/model"
)

func TestBurstNote(t *testing.T) {
	t.Parallel()
	if got := burstNote(&model.Decision{}); got != "" {
		t.Errorf("no bursts: %q", got)
	}
	hold, relaunch := 6.24, 8.32
	d := &model.Decision{Bursts: &model.Bursts{Count: 5, Messages: 11000, LengthSeconds: 60, GapSeconds: 180, BaseRate: 20,
		NeedWorkers: 190, WarmWorkers: 190, HoldWorkerHours: 150, RelaunchWorkerHours: 200, HoldDollars: &hold, RelaunchDollars: &relaunch}}
	want := "5 in the last hour, the median of 11,000 messages over 1m, 3m apart, 20 msg/s between them; 190 workers serve them within the promise; 190 kept warm: holding them costs $6.24 an hour, relaunching them for each burst $8.32 an hour."
	if got := burstNote(d); got != want {
		t.Errorf("note\n%q\nwant\n%q", got, want)
	}
	d.Bursts.WarmWorkers, d.Bursts.HoldDollars, d.Bursts.RelaunchDollars = 0, nil, nil
	want = "5 in the last hour, the median of 11,000 messages over 1m, 3m apart, 20 msg/s between them; 190 workers serve them within the promise; none kept warm: holding them would cost 150 worker-hours an hour, relaunching them for each burst 200 worker-hours an hour."
	if got := burstNote(d); got != want {
		t.Errorf("note\n%q\nwant\n%q", got, want)
	}
	d.Bursts.WarmWorkers, d.Bursts.ForThePromise, d.Bursts.LateIfRelaunchedPerHour = 190, true, 5400
	want = "5 in the last hour, the median of 11,000 messages over 1m, 3m apart, 20 msg/s between them; 190 workers serve them within the promise; 190 kept warm for the promise: relaunching them for each burst would leave ~5,400 messages an hour past it (holding them costs 150 worker-hours an hour, relaunching 200 worker-hours an hour)."
	if got := burstNote(d); got != want {
		t.Errorf("note\n%q\nwant\n%q", got, want)
	}
	d.Bursts.NeedHours = 3
	withRank := "5 in the last hour, the median of 11,000 messages over 1m, 3m apart, 20 msg/s between them; 190 workers serve them within the promise (all but the largest 2 of the last 3 hours' bursts); 190 kept warm for the promise: relaunching them for each burst would leave ~5,400 messages an hour past it (holding them costs 150 worker-hours an hour, relaunching 200 worker-hours an hour)."
	if got := burstNote(d); got != withRank {
		t.Errorf("note\n%q\nwant\n%q", got, withRank)
	}
	d.Bursts.NeedHours = 1
	d.Bursts.InBurst, d.Bursts.NotLaunchedWorkers, d.Bursts.LaunchKeepsMessages = true, 67, 175
	want = want[:len(want)-1] + "; a burst is on: 67 more workers would start after most of it and are not launched (they would keep ~175 more messages within the promise, worth less than they cost)."
	if got := burstNote(d); got != want {
		t.Errorf("note\n%q\nwant\n%q", got, want)
	}
}
