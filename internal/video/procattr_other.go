//go:build !linux

package video

import "os/exec"

// setProcAttr keeps exec's default: the context's end kills ffmpeg.
func setProcAttr(cmd *exec.Cmd) {}
