package web

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel stop the process when the test
// process dies, whatever the way.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
