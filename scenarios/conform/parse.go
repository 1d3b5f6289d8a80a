package conform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
)

// Limits of the format. They keep a typo from producing a run that never
// ends or a line that never fits in memory.
const (
	// MaxLineBytes bounds one input line (an inline 1 MiB payload fits).
	MaxLineBytes = 4 << 20
	// MaxOps bounds the operations of one sequence.
	MaxOps = 100_000
	// MaxMultiOps bounds the operations of one multi.
	MaxMultiOps = 1000
	// maxReportedErrors bounds how many bad lines one Parse call reports.
	maxReportedErrors = 20
)

// ReservedSessionName is the ephemeralOwner of container nodes, so no
// session may carry it.
const ReservedSessionName = "container"

// sessionNamePattern keeps session names distinct from the other
// ephemeralOwner renderings ("", "container", "ttl:N", "0x...").
var sessionNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)

// ParseError reports a bad input line.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse reads a sequence: one JSON object per line. Blank lines and lines
// whose first non-blank character is '#' are comments. It reports every bad
// line (up to 20) as a *ParseError, joined with errors.Join, and validates the
// whole sequence as Validate does.
func Parse(r io.Reader) ([]Op, error) {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64<<10), MaxLineBytes)
	var ops []Op
	var errs []error
	lineNumber := 0
	for scanner.Scan() {
		lineNumber++
		line := bytes.TrimSpace(scanner.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		op, err := ParseLine(line)
		if err != nil {
			errs = append(errs, &ParseError{Line: lineNumber, Msg: err.Error()})
			if len(errs) == maxReportedErrors {
				errs = append(errs, fmt.Errorf("too many errors, stopped at line %d", lineNumber))
				return nil, errors.Join(errs...)
			}
			continue
		}
		op.Line = lineNumber
		ops = append(ops, op)
		if len(ops) > MaxOps {
			return nil, &ParseError{Line: lineNumber, Msg: fmt.Sprintf("more than %d operations", MaxOps)}
		}
	}
	if err := scanner.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d bytes", MaxLineBytes)
		}
		errs = append(errs, &ParseError{Line: lineNumber + 1, Msg: err.Error()})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := Validate(ops); err != nil {
		return nil, err
	}
	return ops, nil
}

// ParseLine parses one JSON object into an Op and checks it on its own (the
// sequence rules of Validate need the whole sequence).
func ParseLine(line []byte) (Op, error) {
	decoder := json.NewDecoder(bytes.NewReader(line))
	decoder.DisallowUnknownFields()
	var raw rawOp
	if err := decoder.Decode(&raw); err != nil {
		return Op{}, describeJSONError(err)
	}
	if rest := bytes.TrimSpace(line[decoder.InputOffset():]); len(rest) > 0 {
		return Op{}, fmt.Errorf("unexpected text after the JSON object: %q", truncate(string(rest), 40))
	}
	op, err := raw.toOp(false)
	if err != nil {
		return Op{}, err
	}
	if err := op.validate(false); err != nil {
		return Op{}, err
	}
	return op, nil
}

// describeJSONError rewrites encoding/json errors in the terms of the format
// instead of Go's.
func describeJSONError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return fmt.Errorf("expected a JSON object, got a JSON %s", typeErr.Value)
		}
		return fmt.Errorf("field %q: expected %s, got a JSON %s", typeErr.Field, describeType(typeErr.Type), typeErr.Value)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Errorf("malformed JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("malformed JSON: unexpected end of line")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return errors.New(msg)
}

// describeType names a Go type the way the format documentation does.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int32:
		return "a 32-bit integer"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(describeType(t.Elem()), "a ") + "s"
	case reflect.Struct:
		return "an object"
	}
	return t.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// rawOp is an input line as written: pointers tell present fields from
// absent ones.
type rawOp struct {
	Session   *string   `json:"session"`
	Op        *string   `json:"op"`
	Path      *string   `json:"path"`
	Data      *string   `json:"data"`
	DataLen   *int      `json:"data_len"`
	Flags     *[]string `json:"flags"`
	TTLMs     *int64    `json:"ttl_ms"`
	Version   *int32    `json:"version"`
	Watch     *bool     `json:"watch"`
	ACL       *[]rawACL `json:"acl"`
	Scheme    *string   `json:"scheme"`
	Auth      *string   `json:"auth"`
	TimeoutMs *int      `json:"timeout_ms"`
	Ops       *[]rawOp  `json:"ops"`
}

type rawACL struct {
	Perms  *string `json:"perms"`
	Scheme *string `json:"scheme"`
	ID     *string `json:"id"`
}

// presentFields lists the fields the line sets, in declaration order.
func (r *rawOp) presentFields() []string {
	var present []string
	value := reflect.ValueOf(r).Elem()
	for i := 0; i < value.NumField(); i++ {
		if !value.Field(i).IsNil() {
			name, _, _ := strings.Cut(value.Type().Field(i).Tag.Get("json"), ",")
			present = append(present, name)
		}
	}
	return present
}

// allowedFields returns the fields an op of the kind may carry; nil for an
// unknown kind.
func allowedFields(kind OpKind, inMulti bool) map[string]bool {
	allowed := map[string]bool{"op": true}
	if !inMulti {
		allowed["session"] = true
		allowed["timeout_ms"] = true
	}
	var extra []string
	switch kind {
	case OpCreate:
		extra = []string{"path", "data", "data_len", "flags", "ttl_ms", "acl"}
	case OpDelete, OpCheck:
		extra = []string{"path", "version"}
	case OpExists, OpGet, OpChildren:
		extra = []string{"path", "watch"}
	case OpSet:
		extra = []string{"path", "data", "data_len", "version"}
	case OpSync, OpGetACL:
		extra = []string{"path"}
	case OpSetACL:
		extra = []string{"path", "acl", "version"}
	case OpAddAuth:
		extra = []string{"scheme", "auth"}
	case OpClose, OpExpire:
	case OpMulti:
		extra = []string{"ops"}
	default:
		return nil
	}
	for _, name := range extra {
		allowed[name] = true
	}
	return allowed
}

// knownKinds renders the allowed kinds for an error message.
func knownKinds(inMulti bool) string {
	kinds := TopLevelOps
	if inMulti {
		kinds = MultiOps
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// toOp checks presence rules and converts the line into an Op with defaults.
func (r *rawOp) toOp(inMulti bool) (Op, error) {
	if r.Op == nil {
		return Op{}, errors.New(`missing required field "op"`)
	}
	kind := OpKind(*r.Op)
	allowed := allowedFields(kind, inMulti)
	if allowed == nil || (inMulti && !isMultiKind(kind)) || (!inMulti && kind == OpCheck) {
		where := ""
		if inMulti {
			where = " inside a multi"
		}
		return Op{}, fmt.Errorf("unknown op %q%s (want one of %s)", *r.Op, where, knownKinds(inMulti))
	}
	for _, field := range r.presentFields() {
		if !allowed[field] {
			if inMulti && (field == "session" || field == "timeout_ms") {
				return Op{}, fmt.Errorf("%s: field %q is not allowed inside a multi (the multi's session applies)", kind, field)
			}
			return Op{}, fmt.Errorf("%s: field %q is not allowed for this op", kind, field)
		}
	}
	missing := func(field string) error {
		return fmt.Errorf("%s: missing required field %q", kind, field)
	}
	op := Op{Kind: kind, Version: -1}
	if !inMulti {
		if r.Session == nil {
			return Op{}, missing("session")
		}
		op.Session = *r.Session
	}
	if kind.hasPath() {
		if r.Path == nil {
			return Op{}, missing("path")
		}
		op.Path = *r.Path
	}
	if r.Data != nil && r.DataLen != nil {
		return Op{}, fmt.Errorf("%s: fields \"data\" and \"data_len\" are mutually exclusive", kind)
	}
	if r.Data != nil {
		op.Data = *r.Data
	}
	if r.DataLen != nil {
		if *r.DataLen < 0 {
			return Op{}, fmt.Errorf("%s: data_len must not be negative, got %d", kind, *r.DataLen)
		}
		op.DataLen = *r.DataLen
	}
	if r.Flags != nil {
		flags, err := parseFlags(*r.Flags)
		if err != nil {
			return Op{}, fmt.Errorf("%s: %w", kind, err)
		}
		op.Flags = flags
	}
	if op.Flags.TTL && r.TTLMs == nil {
		return Op{}, fmt.Errorf("%s: flag ttl needs field \"ttl_ms\"", kind)
	}
	if r.TTLMs != nil {
		if !op.Flags.TTL {
			return Op{}, fmt.Errorf("%s: field \"ttl_ms\" needs flag ttl", kind)
		}
		op.TTLMs = *r.TTLMs
	}
	if r.Version != nil {
		op.Version = *r.Version
	}
	if r.Watch != nil {
		op.Watch = *r.Watch
	}
	if err := r.convertACL(&op); err != nil {
		return Op{}, err
	}
	if kind == OpAddAuth {
		if r.Scheme == nil {
			return Op{}, missing("scheme")
		}
		if r.Auth == nil {
			return Op{}, missing("auth")
		}
		op.Scheme, op.Auth = *r.Scheme, *r.Auth
	}
	if r.TimeoutMs != nil {
		op.TimeoutMs = *r.TimeoutMs
		if op.TimeoutMs <= 0 {
			return Op{}, fmt.Errorf("%s: timeout_ms must be positive, got %d", kind, op.TimeoutMs)
		}
	}
	if kind == OpMulti {
		if r.Ops == nil {
			return Op{}, missing("ops")
		}
		op.Ops = make([]Op, 0, len(*r.Ops))
		for i := range *r.Ops {
			sub, err := (*r.Ops)[i].toOp(true)
			if err != nil {
				return Op{}, fmt.Errorf("multi ops[%d]: %w", i, err)
			}
			op.Ops = append(op.Ops, sub)
		}
	}
	return op, nil
}

// convertACL fills op.ACL: the default for a create without "acl", the
// given list otherwise; setacl requires the field.
func (r *rawOp) convertACL(op *Op) error {
	if r.ACL == nil {
		switch op.Kind {
		case OpSetACL:
			return fmt.Errorf("%s: missing required field \"acl\"", op.Kind)
		case OpCreate:
			op.ACL = DefaultACL()
		}
		return nil
	}
	op.ACL = make([]ACL, 0, len(*r.ACL))
	for i, entry := range *r.ACL {
		if entry.Perms == nil || entry.Scheme == nil || entry.ID == nil {
			return fmt.Errorf("%s: acl[%d] needs the fields \"perms\", \"scheme\" and \"id\"", op.Kind, i)
		}
		perms, err := ParsePerms(*entry.Perms)
		if err != nil {
			return fmt.Errorf("%s: acl[%d].perms: %w", op.Kind, i, err)
		}
		op.ACL = append(op.ACL, ACL{Perms: perms, Scheme: *entry.Scheme, ID: *entry.ID})
	}
	return nil
}

func isMultiKind(kind OpKind) bool {
	for _, k := range MultiOps {
		if k == kind {
			return true
		}
	}
	return false
}

func isTopLevelKind(kind OpKind) bool {
	for _, k := range TopLevelOps {
		if k == kind {
			return true
		}
	}
	return false
}

// validate checks one resolved op on its own.
func (o Op) validate(inMulti bool) error {
	if inMulti && !isMultiKind(o.Kind) || !inMulti && !isTopLevelKind(o.Kind) {
		return fmt.Errorf("unknown op %q (want one of %s)", o.Kind, knownKinds(inMulti))
	}
	if inMulti && (o.Session != "" || o.TimeoutMs != 0) {
		return fmt.Errorf("%s: session and timeout_ms are not allowed inside a multi", o.Kind)
	}
	if !inMulti {
		if !sessionNamePattern.MatchString(o.Session) || o.Session == ReservedSessionName {
			return fmt.Errorf("%s: bad session name %q (want a letter, then up to 31 letters, digits, '_' or '-'; not %q)",
				o.Kind, o.Session, ReservedSessionName)
		}
	}
	if o.TimeoutMs < 0 || o.TimeoutMs > MaxSessionTimeoutMs {
		return fmt.Errorf("%s: timeout_ms %d out of range [1, %d]", o.Kind, o.TimeoutMs, MaxSessionTimeoutMs)
	}
	if !o.Kind.hasData() && (o.Data != "" || o.DataLen != 0) {
		return fmt.Errorf("%s: takes no data", o.Kind)
	}
	if o.Data != "" && o.DataLen != 0 {
		return fmt.Errorf("%s: data and data_len are mutually exclusive", o.Kind)
	}
	if o.DataLen < 0 || o.PayloadLen() > MaxDataBytes {
		return fmt.Errorf("%s: payload of %d bytes out of range [0, %d]", o.Kind, o.PayloadLen(), MaxDataBytes)
	}
	if err := o.validateModeAndACL(inMulti); err != nil {
		return err
	}
	if o.Watch && !o.Kind.hasWatch() {
		return fmt.Errorf("%s: cannot leave a watch", o.Kind)
	}
	if !o.Kind.hasVersion() && o.Version != -1 && o.Version != 0 {
		return fmt.Errorf("%s: takes no version", o.Kind)
	}
	if o.Kind != OpAddAuth && (o.Scheme != "" || o.Auth != "") {
		return fmt.Errorf("%s: takes no scheme or auth", o.Kind)
	}
	if o.Kind != OpMulti && o.Ops != nil {
		return fmt.Errorf("%s: takes no ops", o.Kind)
	}
	if len(o.Ops) > MaxMultiOps {
		return fmt.Errorf("%s: %d ops, more than %d", o.Kind, len(o.Ops), MaxMultiOps)
	}
	for i, sub := range o.Ops {
		if err := sub.validate(true); err != nil {
			return fmt.Errorf("multi ops[%d]: %w", i, err)
		}
	}
	return nil
}

// validateModeAndACL checks flags, TTL and ACL entries.
func (o Op) validateModeAndACL(inMulti bool) error {
	if o.Kind != OpCreate && o.Flags != (Flags{}) {
		return fmt.Errorf("%s: takes no flags", o.Kind)
	}
	if err := o.Flags.check(); err != nil {
		return fmt.Errorf("%s: %w", o.Kind, err)
	}
	if inMulti && (o.Flags.Container || o.Flags.TTL) {
		// go-zookeeper's Multi sends creates with the plain create opcode,
		// which carries no TTL; the format leaves both extended modes out of
		// multis rather than send something the Java client never would.
		return fmt.Errorf("%s: flags container and ttl are not supported inside a multi", o.Kind)
	}
	if !o.Flags.TTL && o.TTLMs != 0 {
		return fmt.Errorf("%s: ttl_ms needs flag ttl", o.Kind)
	}
	if o.Kind != OpCreate && o.Kind != OpSetACL && o.ACL != nil {
		return fmt.Errorf("%s: takes no acl", o.Kind)
	}
	for i, entry := range o.ACL {
		if entry.Perms&^PermAll != 0 {
			return fmt.Errorf("%s: acl[%d]: permission bits 0x%x outside cdrwa", o.Kind, i, int32(entry.Perms))
		}
	}
	return nil
}

// Validate checks a sequence: every op on its own, plus the sequence rule
// that timeout_ms may only appear on the op that opens its session (its
// first use, or the first use after close or expire).
func Validate(ops []Op) error {
	if len(ops) > MaxOps {
		return fmt.Errorf("%d operations, more than %d", len(ops), MaxOps)
	}
	open := map[string]bool{}
	for i, op := range ops {
		if err := op.validate(false); err != nil {
			return fmt.Errorf("%s: %w", op.where(i), err)
		}
		if op.TimeoutMs != 0 && open[op.Session] {
			return fmt.Errorf("%s: %s: timeout_ms is only allowed on the op that opens session %q, which is already open",
				op.where(i), op.Kind, op.Session)
		}
		open[op.Session] = op.Kind != OpClose && op.Kind != OpExpire
	}
	return nil
}
