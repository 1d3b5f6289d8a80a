package failurestore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // The pure-Go SQLite driver, registered as "sqlite".
)

// schemaVersion is stored in PRAGMA user_version; a database written by a newer schema is refused
// rather than misread.
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS signatures (
	signature      TEXT PRIMARY KEY,
	class          TEXT NOT NULL,
	invariant      TEXT NOT NULL,
	shape          TEXT NOT NULL,
	count          INTEGER NOT NULL,
	-- The fault verbs the smallest script needs.
	faults         TEXT NOT NULL,
	first_seen     TEXT NOT NULL,
	last_seen      TEXT NOT NULL,
	-- The smallest script found for the signature, and the find it came from.
	seed           INTEGER NOT NULL,
	script_seed    INTEGER NOT NULL,
	build          TEXT NOT NULL,
	flags          TEXT NOT NULL,
	script         TEXT NOT NULL,
	script_actions INTEGER NOT NULL,
	explanation    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS occurrences (
	seed           INTEGER NOT NULL,
	build          TEXT NOT NULL,
	flags          TEXT NOT NULL,
	signature      TEXT NOT NULL REFERENCES signatures(signature),
	found_at       TEXT NOT NULL,
	script_actions INTEGER NOT NULL,
	PRIMARY KEY (seed, build, flags)
);
CREATE INDEX IF NOT EXISTS occurrences_by_signature ON occurrences(signature);
CREATE TABLE IF NOT EXISTS farm_runs (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	build      TEXT NOT NULL,
	flags      TEXT NOT NULL,
	seed_start INTEGER NOT NULL,
	next_seed  INTEGER NOT NULL,
	seeds_run  INTEGER NOT NULL,
	started    TEXT NOT NULL,
	updated    TEXT NOT NULL
);
`

// Failure is one failing seed as the farm found it, with its shrunk script.
type Failure struct {
	Seed  uint64
	Build string // the binary that found it (simrun's build information)
	Flags string // the scenario flags of the search, as a replay command repeats them
	// Class, Invariant and Shape make the signature (see the package documentation).
	Class     string
	Invariant string
	Shape     string
	// Faults are the fault verbs the shrunk script still needs (FaultSet): what it takes to show
	// the failure, kept with the smallest script but not part of the signature.
	Faults string
	// Script is the shrunk script, and ScriptSeed the seed it fails with (the seed itself, unless
	// shrinking fell back to another).
	Script        string
	ScriptSeed    uint64
	ScriptActions int
	// Explanation is the failure's one-line headline.
	Explanation string
	FoundAt     time.Time
}

// Signature is the failure's signature: the key under which its finds are counted.
func (f Failure) Signature() string { return Signature(f.Class, f.Invariant, f.Shape) }

// Signature joins the three parts of a signature.
func Signature(class, invariant, shape string) string {
	return class + " | " + invariant + " | " + shape
}

// ShortID is a signature's short, stable name: the first 12 hex digits of its SHA-256, for file
// names and for picking one signature on a command line.
func ShortID(signature string) string {
	sum := sha256.Sum256([]byte(signature))
	return hex.EncodeToString(sum[:6])
}

// Recorded says what Record did with a failure.
type Recorded struct {
	Signature string
	// New is true for the first find of its signature.
	New bool
	// Repeat is true when this seed, build and flags were recorded before (a farm restarted over
	// seeds it had already run): the find is not counted again.
	Repeat bool
	// Smaller is true when the failure's script replaced the signature's smallest one.
	Smaller bool
	// Count is the signature's number of finds after this one.
	Count int64
}

// Entry is one signature with its count and its smallest script.
type Entry struct {
	Signature     string    `json:"signature"`
	ID            string    `json:"id"`
	Class         string    `json:"class"`
	Invariant     string    `json:"invariant"`
	Shape         string    `json:"shape"`
	Faults        string    `json:"faults"`
	Count         int64     `json:"count"`
	FirstSeen     time.Time `json:"first_seen"`
	LastSeen      time.Time `json:"last_seen"`
	Seed          uint64    `json:"seed"`
	ScriptSeed    uint64    `json:"script_seed"`
	Build         string    `json:"build"`
	Flags         string    `json:"flags"`
	Script        string    `json:"script"`
	ScriptActions int       `json:"script_actions"`
	Explanation   string    `json:"explanation"`
}

// Store is an open failure database. Its methods may be called from one goroutine at a time.
type Store struct {
	db *sql.DB
}

// Open opens or creates the database at path.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("failure store: no database path")
	}
	// WAL lets 'simrun failures' read while a farm writes; synchronous=FULL makes each commit
	// durable before it returns, which is what keeps a killed farm's rows.
	query := url.Values{}
	for _, pragma := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(ON)"} {
		query.Add("_pragma", pragma)
	}
	query.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+query.Encode())
	if err != nil {
		return nil, fmt.Errorf("failure store %s: %w", path, err)
	}
	// One connection: the pragmas hold for every statement, and writes never contend in-process.
	db.SetMaxOpenConns(1)
	s := &Store{db: db}
	if err := s.migrate(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("failure store %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) migrate() error {
	var version int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("not a readable SQLite database: %w", err)
	}
	if version > schemaVersion {
		return fmt.Errorf("written by a newer simrun (schema %d; this one knows %d)", version, schemaVersion)
	}
	if version == schemaVersion {
		return nil
	}
	if _, err := s.db.Exec(schema); err != nil {
		return fmt.Errorf("creating the schema: %w", err)
	}
	_, err := s.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
	return err
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Seeds are uint64 and SQLite's integers int64: a seed is stored as the int64 of the same bits.
func seedValue(seed uint64) int64 { return int64(seed) }
func seedOf(value int64) uint64   { return uint64(value) }

func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Record stores one failure in one transaction: the find is counted under its signature (once per
// seed, build and flags), and its script becomes the signature's smallest when it has fewer
// actions (or as many, and is shorter).
func (s *Store) Record(f Failure) (Recorded, error) {
	signature := f.Signature()
	recorded := Recorded{Signature: signature}
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return recorded, fmt.Errorf("recording seed %d: %w", f.Seed, err)
	}
	defer func() { _ = tx.Rollback() }()

	var count int64
	var bestActions int
	var bestScript string
	err = tx.QueryRow("SELECT count, script_actions, script FROM signatures WHERE signature = ?", signature).Scan(&count, &bestActions, &bestScript)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		recorded.New, recorded.Smaller = true, true
		_, err = tx.Exec(`INSERT INTO signatures (signature, class, invariant, shape, count, faults, first_seen, last_seen, seed,
			script_seed, build, flags, script, script_actions, explanation) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			signature, f.Class, f.Invariant, f.Shape, f.Faults, timeText(f.FoundAt), timeText(f.FoundAt), seedValue(f.Seed), seedValue(f.ScriptSeed),
			f.Build, f.Flags, f.Script, f.ScriptActions, f.Explanation)
	case err == nil:
		if f.ScriptActions < bestActions || f.ScriptActions == bestActions && len(f.Script) < len(bestScript) {
			recorded.Smaller = true
			_, err = tx.Exec(`UPDATE signatures SET seed = ?, script_seed = ?, build = ?, flags = ?, script = ?, script_actions = ?,
				faults = ?, explanation = ? WHERE signature = ?`, seedValue(f.Seed), seedValue(f.ScriptSeed), f.Build, f.Flags, f.Script,
				f.ScriptActions, f.Faults, f.Explanation, signature)
		}
	}
	if err != nil {
		return recorded, fmt.Errorf("recording seed %d: %w", f.Seed, err)
	}
	result, err := tx.Exec(`INSERT INTO occurrences (seed, build, flags, signature, found_at, script_actions) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, seedValue(f.Seed), f.Build, f.Flags, signature, timeText(f.FoundAt), f.ScriptActions)
	if err != nil {
		return recorded, fmt.Errorf("recording seed %d: %w", f.Seed, err)
	}
	if inserted, _ := result.RowsAffected(); inserted == 0 {
		recorded.Repeat = true
	} else {
		count++
		if _, err := tx.Exec("UPDATE signatures SET count = ?, last_seen = ? WHERE signature = ?", count, timeText(f.FoundAt), signature); err != nil {
			return recorded, fmt.Errorf("recording seed %d: %w", f.Seed, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return recorded, fmt.Errorf("recording seed %d: committing: %w", f.Seed, err)
	}
	recorded.Count = count
	return recorded, nil
}

// List returns every signature, the most often found first.
func (s *Store) List() ([]Entry, error) {
	rows, err := s.db.Query(`SELECT signature, class, invariant, shape, faults, count, first_seen, last_seen, seed, script_seed, build, flags,
		script, script_actions, explanation FROM signatures ORDER BY count DESC, signature`)
	if err != nil {
		return nil, fmt.Errorf("listing failures: %w", err)
	}
	defer rows.Close()
	var entries []Entry
	for rows.Next() {
		var e Entry
		var firstSeen, lastSeen string
		var seed, scriptSeed int64
		if err := rows.Scan(&e.Signature, &e.Class, &e.Invariant, &e.Shape, &e.Faults, &e.Count, &firstSeen, &lastSeen, &seed, &scriptSeed,
			&e.Build, &e.Flags, &e.Script, &e.ScriptActions, &e.Explanation); err != nil {
			return nil, fmt.Errorf("listing failures: %w", err)
		}
		e.ID = ShortID(e.Signature)
		e.Seed, e.ScriptSeed = seedOf(seed), seedOf(scriptSeed)
		e.FirstSeen, _ = time.Parse(time.RFC3339Nano, firstSeen)
		e.LastSeen, _ = time.Parse(time.RFC3339Nano, lastSeen)
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing failures: %w", err)
	}
	return entries, nil
}

// Occurrences returns the seeds recorded for a signature, in the order they were found.
func (s *Store) Occurrences(signature string) ([]uint64, error) {
	rows, err := s.db.Query("SELECT seed FROM occurrences WHERE signature = ? ORDER BY found_at, seed", signature)
	if err != nil {
		return nil, fmt.Errorf("listing finds: %w", err)
	}
	defer rows.Close()
	var seeds []uint64
	for rows.Next() {
		var seed int64
		if err := rows.Scan(&seed); err != nil {
			return nil, fmt.Errorf("listing finds: %w", err)
		}
		seeds = append(seeds, seedOf(seed))
	}
	return seeds, rows.Err()
}

// Finds counts every recorded find, over all signatures.
func (s *Store) Finds() (int64, error) {
	var n int64
	err := s.db.QueryRow("SELECT count(*) FROM occurrences").Scan(&n)
	return n, err
}

// NextSeed is the first seed no earlier farm run on this database has reached with these flags,
// so that a new run searches fresh seeds; 1 on a new database. A farm records its progress from
// time to time, and each failure at once, so after a killed farm it is the later of the two.
func (s *Store) NextSeed(flags string) (uint64, error) {
	var progress, failure sql.NullInt64
	err := s.db.QueryRow("SELECT max(next_seed) FROM farm_runs WHERE flags = ?", flags).Scan(&progress)
	if err == nil {
		err = s.db.QueryRow("SELECT max(seed) + 1 FROM occurrences WHERE flags = ?", flags).Scan(&failure)
	}
	if err != nil {
		return 0, fmt.Errorf("reading earlier farm runs: %w", err)
	}
	next := max(seedOf(progress.Int64), seedOf(failure.Int64))
	if next == 0 {
		return 1, nil
	}
	return next, nil
}

// StartRun records the start of a farm run and returns its ID.
func (s *Store) StartRun(build, flags string, seedStart uint64, now time.Time) (int64, error) {
	result, err := s.db.Exec(`INSERT INTO farm_runs (build, flags, seed_start, next_seed, seeds_run, started, updated)
		VALUES (?, ?, ?, ?, 0, ?, ?)`, build, flags, seedValue(seedStart), seedValue(seedStart), timeText(now), timeText(now))
	if err != nil {
		return 0, fmt.Errorf("recording the farm run: %w", err)
	}
	return result.LastInsertId()
}

// UpdateRun records a farm run's progress: every seed below nextSeed has been handed out.
func (s *Store) UpdateRun(id int64, nextSeed uint64, seedsRun int64, now time.Time) error {
	_, err := s.db.Exec("UPDATE farm_runs SET next_seed = ?, seeds_run = ?, updated = ? WHERE id = ?",
		seedValue(nextSeed), seedsRun, timeText(now), id)
	if err != nil {
		return fmt.Errorf("recording the farm's progress: %w", err)
	}
	return nil
}

// FaultSet renders the fault verbs of a script: distinct, sorted, joined by "+", "no-faults" for
// none.
func FaultSet(verbs []string) string {
	seen := map[string]bool{}
	var distinct []string
	for _, verb := range verbs {
		if !seen[verb] {
			seen[verb] = true
			distinct = append(distinct, verb)
		}
	}
	if len(distinct) == 0 {
		return "no-faults"
	}
	slices.Sort(distinct)
	return strings.Join(distinct, "+")
}
