package futures

import (
	"math"
	"math/rand/v2"
	"testing"
)

// burstBook is a book of steps of step seconds at the given rates, msg/s.
func burstBook(step float64, rates ...float64) *Book {
	b := NewBook(step, step*float64(len(rates)), step)
	for i, r := range rates {
		b.Observe(float64(i)*step, float64(i+1)*step, r*step)
	}
	return b
}

// One step of 10 s at 100 msg/s, then nine quiet ones, promise 5 s. Served
// at m msg/s the backlog grows at 100 − m, and the message arriving at t
// waits (100 − m) t ÷ m: late after 5m ÷ (100 − m) s. At 50 msg/s that is
// the burst's second half, 500 of its 1,000 messages. Every message is in
// time when the backlog at the burst's end, (100 − m) × 10, is at most
// 5m: m = 1000 ÷ 15 = 66.7 msg/s; half of them late allows m = 50.
func TestBookLateAndHoldWorkedExample(t *testing.T) {
	t.Parallel()
	b := burstBook(10, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	if late, total := b.Late(50, 5); math.Abs(late-500) > 1e-6 || math.Abs(total-1000) > 1e-6 {
		t.Errorf("Late(50 msg/s, 5 s) = %v of %v, want 500 of 1000", late, total)
	}
	if late, _ := b.Late(80, 5); late != 0 {
		t.Errorf("Late(80 msg/s, 5 s) = %v, want 0: (100 − 80) × 10 = 200 ≤ 5 × 80", late)
	}
	if late, total := b.Late(0, 5); late != total || total != 1000 {
		t.Errorf("Late(0) = %v of %v, want every message late", late, total)
	}
	for _, c := range []struct{ allowance, want float64 }{{0, 1000.0 / 15}, {0.5, 50}, {0.01, 0}} {
		want := c.want
		if want == 0 { // 10 of the 1,000 late: 10 − 5m ÷ (100 − m) = 0.1
			want = 100 * 9.9 / 14.9
		}
		got, ok := b.Hold(5, c.allowance)
		if !ok || math.Abs(got-want) > holdPrecision*100 || got < want-1e-9 {
			t.Errorf("Hold(5 s, %v) = %v, %v; want %.3f (never below it)", c.allowance, got, ok, want)
		}
	}
	if _, ok := burstBook(5, 0, 0, 0).Hold(5, 0.01); ok {
		t.Error("Hold on a book without arrivals: ok, want none")
	}
	// A fleet at the mean keeps a steady book within the promise.
	if got, ok := burstBook(5, 7, 7, 7, 7).Hold(1, 0); !ok || got != 7 {
		t.Errorf("Hold on a steady 7 msg/s = %v, %v; want the mean, 7", got, ok)
	}
}

// Late agrees with a message-by-message FIFO queue: each step's messages
// arrive evenly spaced within it, the server starts one every 1 ÷ m
// seconds, and a message is late when it starts more than the promise
// after it arrived. Random bursty books, rates and promises.
func TestBookLateAgreesWithMessageByMessage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 11))
	for trial := range 40 {
		const step = 5.0
		rates := make([]float64, 60)
		for i := range rates {
			rates[i] = 20 + 20*rng.Float64()
			if rng.Float64() < 0.1 {
				rates[i] *= 4 + 6*rng.Float64()
			}
			rates[i] = math.Round(rates[i]*step) / step // whole messages a step
		}
		b := burstBook(step, rates...)
		m := 40 + 80*rng.Float64()
		promise := 2 + 20*rng.Float64()
		late, total := b.Late(m, promise)

		var count, lateCount float64
		free := 0.0 // when the server is free for the next message
		for i, r := range rates {
			n := int(math.Round(r * step))
			for j := range n {
				at := float64(i)*step + (float64(j)+0.5)*step/float64(n)
				start := math.Max(at, free)
				free = start + 1/m
				count++
				if start-at > promise {
					lateCount++
				}
			}
		}
		if math.Abs(total-count) > 1e-6*count { // the book keeps rates as float32
			t.Fatalf("trial %d: total %v, want %v messages", trial, total, count)
		}
		// The fluid queue and the messages differ by a message or two at
		// each crossing of the promise.
		if math.Abs(late-lateCount) > 0.005*count+4 {
			t.Errorf("trial %d (m %.1f msg/s, promise %.1f s): fluid late %.1f, message by message %v of %v", trial, m, promise, late, lateCount, count)
		}
	}
}

// BenchmarkBookHold finds the fixed fleet for an hour of 5 s steps.
func BenchmarkBookHold(b *testing.B) {
	book := flatBook(50, 400, 40)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := book.Hold(30, 0.005); !ok {
			b.Fatal("no fleet")
		}
	}
}

// BenchmarkBookHeadroom finds the headroom an hour of 5 s steps needed: the
// replay a measured ceiling makes once a minute.
func BenchmarkBookHeadroom(b *testing.B) {
	book := flatBook(50, 400, 40)
	f := Follower{Headroom: 1.25, Tau: 60, Lag: 60, Least: 1 / 0.9}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := book.Headroom(f, 30, 0.002); !ok {
			b.Fatal("no headroom")
		}
	}
}

// A follower of a steady book serves headroom × its rate. Six steps of
// 10 s at 10 msg/s, promise 30 s: below the rate the backlog grows by
// 100 (1 − h) a step, and a message is late once it exceeds a promise of
// service, 300 h. All 600 in time needs 600 (1 − h) ≤ 300 h: h = 2/3. With
// a share a of them late, the backlog may cross the limit at t = 30 h ÷
// (1 − h) ≥ 60 (1 − a): h = 2 (1 − a) ÷ (3 − 2a), 9 ÷ 14 at a = 0.1.
func TestHeadroomWorkedExample(t *testing.T) {
	t.Parallel()
	b := burstBook(10, 10, 10, 10, 10, 10, 10)
	for _, c := range []struct{ allowance, want float64 }{{0, 2.0 / 3}, {0.1, 9.0 / 14}} {
		for _, lag := range []float64{0, 30} { // a steady rate: no lag matters
			h, ok := b.Headroom(Follower{Headroom: 1.25, Tau: 60, Lag: lag}, 30, c.allowance)
			if !ok || math.Abs(h-c.want) > 2*holdPrecision {
				t.Errorf("allowance %v, lag %v s: headroom %v, %v; want %v", c.allowance, lag, h, ok, c.want)
			}
		}
	}
	// A tenth of the steps at ten times the rate: no headroom up to 1.25
	// keeps them; the most is the answer.
	burst := burstBook(10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 100)
	if h, ok := burst.Headroom(Follower{Headroom: 1.25, Tau: 60}, 5, 0.001); !ok || h != 1.25 {
		t.Errorf("a burst: headroom %v, %v; want the most, 1.25", h, ok)
	}
	if _, ok := NewBook(10, 100, 10).Headroom(Follower{Headroom: 1.25, Tau: 60}, 30, 0.01); ok {
		t.Error("an empty book gave a headroom")
	}
	// Needing less than the least worth finding gives the least.
	if h, ok := b.Headroom(Follower{Headroom: 1.25, Tau: 60, Least: 0.9}, 30, 0); !ok || h != 0.9 {
		t.Errorf("least 0.9 of a book that needs 2/3: %v, %v; want 0.9", h, ok)
	}
	if h, ok := b.Headroom(Follower{Headroom: 1.25, Tau: 60, Least: 0.5}, 30, 0); !ok || math.Abs(h-2.0/3) > 2*holdPrecision {
		t.Errorf("least 0.5 of a book that needs 2/3: %v, %v; want 2/3", h, ok)
	}
}

// On a rising book the follower that adds workers a start delay late needs
// more headroom than one that adds them at once, and each answer is the
// least that meets the allowance: a little less leaves more late.
func TestHeadroomIsTheLeastThatMeetsTheAllowance(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	rates := make([]float64, 360)
	for i := range rates {
		rates[i] = 20 + float64(i)/6 + 4*rng.NormFloat64() // 20 to 80 msg/s over half an hour, with noise
	}
	b := burstBook(5, rates...)
	const promise, allowance = 30.0, 0.002
	prompt, ok1 := b.Headroom(Follower{Headroom: 2, Tau: 60}, promise, allowance)
	late, ok2 := b.Headroom(Follower{Headroom: 2, Tau: 60, Lag: 120}, promise, allowance)
	if !ok1 || !ok2 || !(late > prompt) || late >= 2 {
		t.Fatalf("headroom %v with no lag, %v two minutes late (%v %v): want the late one higher, below 2", prompt, late, ok1, ok2)
	}
	for _, c := range []struct {
		lag, h float64
	}{{0, prompt}, {120, late}} {
		f := Follower{Headroom: c.h, Tau: 60, Lag: c.lag}
		if l, total := b.lateFollowing(f, promise); l > allowance*total {
			t.Errorf("lag %v: at %v, %v of %v late, above the allowance", c.lag, c.h, l, total)
		}
		f.Headroom = c.h - 2*holdPrecision
		if l, total := b.lateFollowing(f, promise); l <= allowance*total {
			t.Errorf("lag %v: at %v, %v of %v late, within the allowance: %v was not the least", c.lag, f.Headroom, l, total, c.h)
		}
	}
}
