package video

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts ffmpeg in a process group of its own, killed whole when
// the context ends, and has the kernel kill it if this process dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
