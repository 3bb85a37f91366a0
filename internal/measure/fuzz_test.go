package measure

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// fuzzInput reads a fuzzer's bytes as a little program; past the end it
// reads zeros.
type fuzzInput struct{ b []byte }

func (in *fuzzInput) bytes(n int) []byte {
	out := make([]byte, n)
	k := copy(out, in.b)
	in.b = in.b[k:]
	return out
}

func (in *fuzzInput) u8() byte     { return in.bytes(1)[0] }
func (in *fuzzInput) i16() int16   { return int16(binary.LittleEndian.Uint16(in.bytes(2))) }
func (in *fuzzInput) i64() int64   { return int64(binary.LittleEndian.Uint64(in.bytes(8))) }
func (in *fuzzInput) bits() uint64 { return binary.LittleEndian.Uint64(in.bytes(8)) }

// value is a count or rate: mostly plausible, sometimes any float64 at all
// (NaN, ±Inf, negative, huge, subnormal).
func (in *fuzzInput) value() float64 {
	k := in.u8()
	if k&0x80 != 0 {
		return math.Float64frombits(in.bits())
	}
	return float64(k) * float64(in.u8()) / 16
}

// FuzzEstimator feeds arbitrary samples, readings, settings and times
// (backwards, far jumps, huge) and checks that nothing panics and every
// Estimate is finite, not negative, and has Confidence in [0, 1].
func FuzzEstimator(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 5, 0, 10, 20, 1})
	f.Add(plausibleRun())
	f.Add(append(plausibleRun(), 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data}
		cfg := Config{
			ServiceTime:       time.Duration(in.i16()) * 10 * time.Millisecond,
			Concurrency:       int(in.i16()),
			VisibilityTimeout: time.Duration(in.i16()) * time.Second,
		}
		e := New(cfg)
		now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for step := 0; len(in.b) > 0 && step < 2000; step++ {
			switch in.u8() % 4 {
			case 0: // a sample, dt seconds after the last (maybe before)
				now = now.Add(time.Duration(in.i16()) * time.Second / 4)
				e.Sample(now, in.value(), in.value(), int(in.i16()), in.u8()&1 == 1)
			case 1: // a reading for a minute near now
				start := now.Truncate(time.Minute).Add(time.Duration(int(in.u8()%24)-4) * -time.Minute)
				e.Minute(start, in.value(), in.value())
			case 2: // anywhere in time
				now = time.Unix(in.i64()/4, int64(in.u8())*1e6)
			case 3: // a run of ordinary samples
				for range int(in.u8() % 64) {
					now = now.Add(5 * time.Second)
					e.Sample(now, 3, 10, 20, true)
				}
			}
			check(t, e.Estimate())
		}
	})
}

func check(t *testing.T, est Estimate) {
	t.Helper()
	if est.ServiceTime < 0 || est.ServiceTime > 12*time.Hour {
		t.Fatalf("ServiceTime %v out of [0, 12h]: %+v", est.ServiceTime, est)
	}
	if math.IsNaN(est.PerWorker) || math.IsInf(est.PerWorker, 0) || est.PerWorker < 0 {
		t.Fatalf("PerWorker %v: %+v", est.PerWorker, est)
	}
	if !(est.Confidence >= 0 && est.Confidence <= 1) {
		t.Fatalf("Confidence %v: %+v", est.Confidence, est)
	}
	if est.Minutes < 0 || est.Minutes > docWindow || est.SaturatedMinutes < 0 || est.SaturatedMinutes > est.Minutes {
		t.Fatalf("Minutes %d, SaturatedMinutes %d: %+v", est.Minutes, est.SaturatedMinutes, est)
	}
	if est.Minutes == 0 && (est.ServiceTime != 0 || est.PerWorker != 0 || est.Confidence != 0) {
		t.Fatalf("an estimate from no minutes: %+v", est)
	}
	if est.Minutes > 0 && est.Last.Before(est.Since) {
		t.Fatalf("Last before Since: %+v", est)
	}
}

// plausibleRun is a seed that learns: a 200 ms prior, 10 in flight on 20
// workers sampled every 5 s for 10 minutes, and each minute's 50 msg/s
// delivered two minutes later.
func plausibleRun() []byte {
	b := []byte{20, 0, 1, 0, 30, 0}
	for i := 0; i < 120; i++ {
		b = append(b, 0, 20, 0, 0, 0, 40, 4, 20, 0, 1) // +5 s, visible 0, in flight 10, 20 workers, complete
		if i%12 == 11 {
			b = append(b, 1, 6, 50, 16, 50, 16) // the minute 2 before: deleted 50, received 50
		}
	}
	return b
}
