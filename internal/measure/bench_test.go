package measure

import (
	"math"
	"testing"
	"time"
)

// BenchmarkSample is one SQS sample every 5 s, crossing into a new minute
// (and recycling its bucket) every 12th.
func BenchmarkSample(b *testing.B) {
	e := New(Config{ServiceTime: 200 * time.Millisecond, VisibilityTimeout: 30 * time.Second})
	now := t0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now = now.Add(5 * time.Second)
		e.Sample(now, 100, float64(10+i%3), 20, true)
	}
}

// primed is an Estimator with a full window of good minutes and 15 sampled
// minutes whose readings have not come yet; it returns the first of those.
func primed() (*Estimator, int) {
	e := New(Config{ServiceTime: 200 * time.Millisecond, VisibilityTimeout: 30 * time.Second})
	const learned = 30
	for m := 0; m < learned+16; m++ {
		for s := 0.0; s < 60; s += 5 {
			e.Sample(at(m, s), 100, 10+float64(m%3), 20, true)
			if d := m - 2; d >= 0 && d < learned {
				e.Minute(at(d, 0), 50+float64(d%5), 51+float64(d%5))
			}
		}
	}
	return e, learned
}

// BenchmarkMinute is Minute on its two paths: a repeat of the newest reading
// (11 calls in 12), and a new minute, judged at once: its Little's-law
// ratio, the stuck and step tests and the window's summary. "new" includes a
// copy of the primed state every 15 calls (1/15 of a 2.8 KB copy).
func BenchmarkMinute(b *testing.B) {
	b.Run("repeat", func(b *testing.B) {
		e, first := primed()
		e.Minute(at(first, 0), 50, 51)
		b.ReportAllocs()
		for b.Loop() {
			e.Minute(at(first, 0), 50, 51)
		}
	})
	b.Run("new", func(b *testing.B) {
		base, first := primed()
		e := new(Estimator)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			j := i % 15
			if j == 0 {
				*e = *base
			}
			e.Minute(at(first+j, 0), 50, 51)
		}
		if e.Estimate().Minutes == 0 {
			b.Fatal("nothing learned")
		}
	})
}

// BenchmarkTick is the daemon's call pattern: a sample and the newest
// reading every 5 s, a new minute every 12 ticks, and an Estimate.
func BenchmarkTick(b *testing.B) {
	e := New(Config{ServiceTime: 200 * time.Millisecond, VisibilityTimeout: 30 * time.Second})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m, s := i/12, float64(i%12)*5
		e.Sample(at(m, s), 100, float64(10+i%3), 20, true)
		if m >= 2 {
			e.Minute(at(m-2, 0), 50, math.NaN())
		}
		_ = e.Estimate()
	}
}
