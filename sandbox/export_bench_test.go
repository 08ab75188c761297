//go:build linux

package sandbox

// LauncherPIDs are the process ids of the command's runtime's pre-started
// launchers (make bench-sandbox charges their CPU time to the calls).
func (c *Command) LauncherPIDs() []int {
	c.rt.zmu.Lock()
	defer c.rt.zmu.Unlock()
	var pids []int
	for _, z := range c.rt.zygotes {
		pids = append(pids, z.cmd.Process.Pid)
	}
	return pids
}
