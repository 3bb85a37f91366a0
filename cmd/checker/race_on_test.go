//go:build race

package main

// raceEnabled: the race detector slows the simulator about tenfold, so the
// comparison's claims, which test outcomes, not concurrency, run without it.
const raceEnabled = true
