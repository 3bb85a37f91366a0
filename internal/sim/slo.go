package sim

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/slo"
)

// SLOHour is one hour of a run (from the start, warm-up included) read two
// ways: the messages the world started within the promise and late (the
// truth), and the daemon's estimate of them from what its sampler sees
// (internal/slo), with the estimate's least trust over the hour.
type SLOHour struct {
	Hour        int     `json:"hour"`
	Started     int64   `json:"started"`
	Share       float64 `json:"share"`
	Estimated   float64 `json:"estimated_started"`
	EstShare    float64 `json:"estimated_share"`
	Trust       string  `json:"trust"`
	TrustReason string  `json:"trust_reason,omitempty"`
}

// hourTruth counts the messages started in one hour, by when they started.
type hourTruth struct{ within, late int64 }

// noteStart counts a message started after waiting wait seconds in the
// truth of the hour it started in.
func (w *World) noteStart(wait float64) {
	h := int(w.t / 3600)
	for len(w.startedHours) <= h {
		w.startedHours = append(w.startedHours, hourTruth{})
	}
	if wait <= w.waits.target {
		w.startedHours[h].within++
	} else {
		w.startedHours[h].late++
	}
}

// sloCounts is what the sampler sees now, for the estimate.
func (w *World) sloCounts() (slo.Counts, *model.Reading) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := slo.Counts{
		Visible:  float64(w.queue.n),
		InFlight: float64(w.inFlight),
		// Workers leaving gracefully still complete what they hold.
		Slots: float64((w.active + w.retiring) * w.concurrency),
	}
	if !w.cfg.ReportOldestAge {
		return c, nil
	}
	if w.cfg.MetricsExact {
		return c, &model.Reading{Value: w.oldestAge(), At: w.at()}
	}
	dp, ok := w.minutes.peek(w.t)
	if !ok {
		return c, nil
	}
	// CloudWatch's minute holds the largest age of the minute: read it as
	// of the minute's end.
	return c, &model.Reading{Value: dp.age, At: w.minutes.at(dp.minute).Add(time.Minute)}
}

// sloProbe runs the daemon's estimate of the promise beside a run: each
// interval, the arrivals by conservation with the service time the
// settings give (slo.Arrived), the visible count and, when the world
// reports it, CloudWatch's oldest age as the poller reads it.
type sloProbe struct {
	est     *slo.Estimator
	service float64
	prev    slo.Counts
	prevAt  time.Time
	have    bool
	hours   []sloEstHour
}

type sloEstHour struct {
	within, late float64
	trust        slo.Trust
	why          string
}

func newSLOProbe(cfg Config) *sloProbe {
	return &sloProbe{est: slo.NewEstimator(cfg.LatencyTarget), service: cfg.SettingsServiceTime().Seconds()}
}

// observe folds in the sample of the world at now, t seconds from the start.
func (p *sloProbe) observe(w *World, now time.Time, t float64) {
	c, age := w.sloCounts()
	in := slo.Input{At: now, Visible: c.Visible, OldestAge: -1}
	if age != nil {
		in.OldestAge, in.OldestAt = age.Value, age.At
	}
	if p.have {
		in.Arrived = slo.Arrived(p.prev, c, now.Sub(p.prevAt).Seconds(), p.service)
	}
	p.prev, p.prevAt, p.have = c, now, true
	st := p.est.Observe(in)
	h := int(t / 3600)
	for len(p.hours) <= h {
		p.hours = append(p.hours, sloEstHour{})
	}
	e := &p.hours[h]
	e.within += st.Within
	e.late += st.Late
	if st.Trust > e.trust {
		e.trust, e.why = st.Trust, st.Why
	}
}

// report is each hour of the run, the last one partial when the run does
// not end on the hour: the truth beside the estimate.
func (p *sloProbe) report(w *World, duration time.Duration) []SLOHour {
	w.mu.Lock()
	truth := append([]hourTruth(nil), w.startedHours...)
	w.mu.Unlock()
	hours := int((duration + time.Hour - 1) / time.Hour)
	out := make([]SLOHour, 0, hours)
	for h := 0; h < hours; h++ {
		var tr hourTruth
		if h < len(truth) {
			tr = truth[h]
		}
		var e sloEstHour
		if h < len(p.hours) {
			e = p.hours[h]
		}
		out = append(out, SLOHour{
			Hour:        h,
			Started:     tr.within + tr.late,
			Share:       slo.Share(float64(tr.within), float64(tr.late)),
			Estimated:   e.within + e.late,
			EstShare:    slo.Share(e.within, e.late),
			Trust:       e.trust.String(),
			TrustReason: e.why,
		})
	}
	return out
}
