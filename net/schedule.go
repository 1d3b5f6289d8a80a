package net

// ScheduleKey names a direction's delivery event for the simulator's schedule mode (see
// sim.ScheduleKeyer): its sender, receiver and port, which do not depend on the path that opened
// the connection, unlike its id.
func (d *direction) ScheduleKey() uint64 {
	c := d.conn
	return uint64(uint32(c.ends[d.from].node))<<40 | uint64(uint32(c.ends[d.to].node))<<20 | uint64(c.port)
}
