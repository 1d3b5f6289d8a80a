package lockmodel

import "strings"

// ReadWriteLock is Curator's InterProcessReadWriteLock: a read lock and a write lock on one path,
// each a reentrant Mutex. Their nodes share the queue, ordered by sequence number whatever their
// kind. A write node holds the lock when it is first in the queue; a read node holds it when no
// write node precedes it, and otherwise watches the first write node (Curator's choice; ZooKeeper's
// recipe has it watch the last write node before it, which wakes fewer readers). The holder of the
// write lock may take the read lock at once (downgrading); a reader can never take the write lock.
type ReadWriteLock struct {
	read, write *Mutex
}

// NewReadWriteLock returns the read-write lock on base. data is stored in each lock node.
func NewReadWriteLock(s *Session, base string, data []byte) (*ReadWriteLock, error) {
	wd := writeDriver{skipReaders: s != nil && s.cfg.Bugs.Has(BugWriterSkipsReaders)}
	write, err := newMutex(s, RecipeWrite, base, WriteLockName, wd, data)
	if err != nil {
		return nil, err
	}
	read, err := newMutex(s, RecipeRead, base, ReadLockName, readDriver{}, data)
	if err != nil {
		return nil, err
	}
	read.downgradeFrom = write
	return &ReadWriteLock{read: read, write: write}, nil
}

// ReadLock returns the lock for readers.
func (l *ReadWriteLock) ReadLock() *Mutex { return l.read }

// WriteLock returns the lock for the writer.
func (l *ReadWriteLock) WriteLock() *Mutex { return l.write }

// rwSortKey is SortingLockInternalsDriver.fixForSorting: either lock name is stripped, so that read
// and write nodes sort together by sequence number.
func rwSortKey(name string) string {
	return fixForSorting(fixForSorting(name, ReadLockName), WriteLockName)
}

// writeDriver is the write lock's predicate: the standard one with one lease. With
// BugWriterSkipsReaders it looks only at the write nodes: it holds the lock when no write node
// precedes it, and otherwise watches the last write node before it.
type writeDriver struct{ skipReaders bool }

func (d writeDriver) sortKey(name string) string { return rwSortKey(name) }

func (d writeDriver) getsTheLock(sorted []string, ours string) (bool, string, bool) {
	if !d.skipReaders {
		return standardDriver{lockName: WriteLockName, maxLeases: 1}.getsTheLock(sorted, ours)
	}
	previousWrite := ""
	for _, node := range sorted {
		if node == ours {
			return previousWrite == "", previousWrite, true
		}
		if strings.Contains(node, WriteLockName) {
			previousWrite = node
		}
	}
	return false, "", false
}

// readDriver is the read lock's predicate (the holder of the write lock is let in by the Mutex
// before the driver is asked).
type readDriver struct{}

func (readDriver) sortKey(name string) string { return rwSortKey(name) }

func (readDriver) getsTheLock(sorted []string, ours string) (bool, string, bool) {
	firstWrite := -1
	for i, node := range sorted {
		if strings.Contains(node, WriteLockName) {
			if firstWrite < 0 {
				firstWrite = i
			}
			continue
		}
		if strings.HasPrefix(node, ours) {
			if firstWrite < 0 {
				return true, "", true
			}
			return false, sorted[firstWrite], true
		}
	}
	return false, "", false
}
