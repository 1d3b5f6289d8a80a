package proto

import (
	"fmt"
	"strconv"
	"strings"
)

// nameRow maps one value of an int32 enumeration to its Java name. The
// enumerations are small, so a slice scanned in declaration order serves for
// both directions and keeps every lookup deterministic.
type nameRow[T ~int32] struct {
	value T
	name  string
}

// formatName returns the Java name of v, or typeName(v) for a value Java does
// not define, so that a trace never loses the number.
func formatName[T ~int32](rows []nameRow[T], v T, typeName string) string {
	for _, row := range rows {
		if row.value == v {
			return row.name
		}
	}
	return typeName + "(" + strconv.Itoa(int(v)) + ")"
}

// parseName is the inverse of formatName.
func parseName[T ~int32](rows []nameRow[T], name, typeName string) (T, error) {
	for _, row := range rows {
		if row.name == name {
			return row.value, nil
		}
	}
	if inner, ok := strings.CutPrefix(name, typeName+"("); ok {
		if digits, ok := strings.CutSuffix(inner, ")"); ok {
			if n, err := strconv.ParseInt(digits, 10, 32); err == nil {
				return T(n), nil
			}
		}
	}
	return 0, fmt.Errorf("proto: unknown %s name %q", typeName, name)
}
