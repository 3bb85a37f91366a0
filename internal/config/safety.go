package config

// validateSafety checks the fleet keys that make the checker safe to own a
// fleet: a fixed size for fleets that are not read.
func (f Fleet) validateSafety(p *problems, path string) {
	switch {
	case f.FixedWorkers < 0:
		p.add(joinPath(path, "fixed_workers"), "must be >= 0 (0 means none), got %d", f.FixedWorkers)
	case f.FixedWorkers > 0 && (f.AutoScalingGroup != nil || f.ECSService != nil):
		p.add(joinPath(path, "fixed_workers"), "set fixed_workers or a fleet to read (autoscaling_group, ecs_service), not both")
	}
}
