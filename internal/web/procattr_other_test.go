//go:build !linux

package web

import "os/exec"

func setParentDeathSignal(*exec.Cmd) {}
