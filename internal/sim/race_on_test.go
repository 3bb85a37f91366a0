//go:build race

package sim

// raceEnabled: the race detector slows the simulator about tenfold, so the
// statistical checks pool fewer runs and widen their tolerances to match.
const raceEnabled = true
