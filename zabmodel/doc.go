// Package zabmodel is a ZooKeeper server as Apache ZooKeeper 3.8.0 implements it, running inside
// zabsim's simulator: the election transport (QuorumCnxManager), and, in its sub-packages, the jute
// records (proto), the data tree (datatree) and durable storage (storage).
//
// Every effect a server has on the world (a message, a timer, a disk write) goes through the
// simulator, so that a run is decided by its seed alone.
package zabmodel
