package config

// validateSafety checks the fleet keys that make the checker safe to own a
// fleet: a fixed size for fleets that are not read.
func (f Fleet) validateSafety(p *problems, path string) {
	switch {
	case f.FixedWorkers < 0:
		p.add(joinPath(path, "fixed_workers"), "must be >= 0 (0 means none), got %d", f.FixedWorkers)
	case f.FixedWorkers > 0 && f.fleetKinds() > 0:
		p.add(joinPath(path, "fixed_workers"), "set fixed_workers or a fleet to read (autoscaling_group, ecs_service, kubernetes), not both")
	}
	if f.Activation < 1 {
		p.add(joinPath(path, "activation"), "must be at least 1 (visible or delayed messages that wake a group at zero), got %d", f.Activation)
	}
	if f.Pin != nil {
		pp := joinPath(path, "pin")
		switch n := *f.Pin; {
		case n < 0:
			p.add(pp, "must be a whole number of workers >= 0, got %d", n)
		case n < f.Min || (f.Max > 0 && n > f.Max):
			p.add(pp, "must be within min and max (%d to %d), got %d", f.Min, f.Max, n)
		}
	}
}
