package ceiling

import (
	"math"
	"time"
)

// Step reads a scale-out at the poller's resolution, minutes before the
// deleted counts that the Detector learns from can: when the slots in
// service grow and every slot is busy before and after, the queue's growth
// should fall by what the new slots complete. A fall far smaller than that
// (below Ineffective of the promise) says the new slots wait for something
// they share, or that arrivals rose by just what they promised at the same
// moment; the first is the likelier, and buying more workers on the
// second reading would buy more of what does not help. Step then holds a
// suspicion until the Detector's minutes settle it (Settle) or
// StepSuspectFor passes.
//
// Arrival noise is allowed for: the fall must miss the promise by more
// than stepSigmas standard deviations of a Poisson count over the two
// intervals compared, and be within fitSigmas of none.
type Step struct {
	have                   bool
	prevAt                 time.Time
	prevTotal, prevVisible float64
	prevSlots              float64

	// last is the newest saturated interval with the same slots at both
	// ends.
	lastOK     bool
	lastEnd    time.Time
	lastSlots  float64
	lastGrowth float64
	lastRate   float64 // its arrivals, msg/s: growth + completions

	suspect bool
	s       ScaleOut
	// gained is the last scale-out that moved the queue as its slots
	// promised, until taken (TakeGain).
	gained   ScaleOut
	gainedOK bool
}

// ScaleOut is a scale-out read from the samples: one that hardly moved
// the queue (a suspicion), or one that moved it as its slots promised.
type ScaleOut struct {
	At            time.Time // the end of the first interval after it
	Before, After float64   // the slots in service before and after
	// Promised is what the added slots complete at their rate, and Fall
	// how much the queue's growth fell, msg/s.
	Promised, Fall float64
}

const (
	// StepSuspectFor is how long a suspicion lasts unless settled: long
	// enough for the deleted count of a whole minute after the scale-out
	// to be read.
	StepSuspectFor = 4 * time.Minute
	// stepGap is how far apart the saturated interval before a scale-out
	// and the one after may end.
	stepGap = time.Minute
	// stepSigmas is the counting noise, in standard deviations, a missed
	// promise must exceed.
	stepSigmas = 3
	// fitSigmas: a suspicion also needs the fall to be within this many
	// standard deviations of none, as a downstream that keeps the new
	// slots waiting leaves it. A queue that grew faster than that once the
	// slots came had its arrivals rise with them (a surge that began with
	// the scale-out), which says nothing of the slots.
	fitSigmas = 2
	// gainSigmas is the counting noise, in standard deviations, by which a
	// gain's fall must pass half its promise: a false gain that no
	// fall came from (a noisy interval) is a 2σ event past half the
	// promise as well.
	gainSigmas = 2
)

// Observe takes one complete sample: the messages in the queue (visible,
// in flight and delayed), the visible ones, the slots in service and what
// one busy slot completes per second.
func (s *Step) Observe(at time.Time, total, visible, slots, perSlot float64) {
	if !(perSlot > 0) || math.IsInf(perSlot, 0) || math.IsNaN(total+visible+slots) || math.IsInf(total+visible+slots, 0) {
		s.have, s.lastOK = false, false
		return
	}
	prevAt, prevTotal, prevVisible, prevSlots, had := s.prevAt, s.prevTotal, s.prevVisible, s.prevSlots, s.have
	s.have, s.prevAt, s.prevTotal, s.prevVisible, s.prevSlots = true, at, total, visible, slots
	if !had || !at.After(prevAt) {
		return
	}
	dt := at.Sub(prevAt).Seconds()
	stable := slots >= 1 && math.Abs(slots-prevSlots) < 1
	saturated := prevVisible >= slots*perSlot*dt && visible > 0
	if !stable || !saturated {
		if slots < prevSlots-0.5 {
			// Fewer slots: a suspicion about more of them is moot.
			s.suspect, s.lastOK = false, false
		}
		return
	}
	growth := (total - prevTotal) / dt
	if s.lastOK && at.Sub(s.lastEnd) <= stepGap+at.Sub(prevAt) && slots >= s.lastSlots*(1+MinGrowth) && slots-s.lastSlots >= 1 {
		promised := (slots - s.lastSlots) * perSlot
		fall := s.lastGrowth - growth
		sigma := math.Sqrt(math.Max(s.lastRate, 1)/dt + math.Max(growth+slots*perSlot, 1)/dt)
		switch {
		case fall < Ineffective*promised && promised-fall > stepSigmas*sigma && fall > -fitSigmas*sigma:
			s.suspect = true
			s.s = ScaleOut{At: at, Before: s.lastSlots, After: slots, Promised: promised, Fall: fall}
		case fall >= Ineffective*promised:
			s.suspect = false
			// A gain must stand out of the noise as a gain: its fall, less
			// gainSigmas of noise, still more than half the promise. A
			// probe of a few workers is too small to read from samples,
			// and is left to the minutes.
			if fall >= Effective*promised && fall-gainSigmas*sigma > Ineffective*promised {
				s.gained, s.gainedOK = ScaleOut{At: at, Before: s.lastSlots, After: slots, Promised: promised, Fall: fall}, true
			}
		}
	}
	s.lastOK, s.lastEnd, s.lastSlots, s.lastGrowth = true, at, slots, growth
	s.lastRate = growth + slots*perSlot
}

// Suspected returns the last scale-out while it is suspected.
func (s *Step) Suspected(now time.Time) (ScaleOut, bool) {
	if !s.suspect || now.Sub(s.s.At) > StepSuspectFor {
		return ScaleOut{}, false
	}
	return s.s, true
}

// TakeGain returns, once, the last scale-out whose slots moved the queue
// as they promised: at least Effective of it, and more than Ineffective of
// it by gainSigmas of counting noise.
func (s *Step) TakeGain() (ScaleOut, bool) {
	k, ok := s.gained, s.gainedOK
	s.gained, s.gainedOK = ScaleOut{}, false
	return k, ok
}

// Since is when the suspicion began.
func (s *Step) Since() time.Time { return s.s.At }

// Settle ends a suspicion: the deleted counts have judged the scale-out.
func (s *Step) Settle() { s.suspect = false }
