package main

import (
	"flag"
	"fmt"
)

// repeatableFlags may be given more than once: each occurrence adds to a list.
var repeatableFlags = map[string]bool{"bug": true}

// onceValue wraps a flag's value so that a second occurrence is an error: with the standard
// library the last one silently wins, and "--seeds 10 ... --seeds 1000" would run whichever came
// last without a word.
type onceValue struct {
	flag.Value
	name string
	seen bool
}

func (o *onceValue) Set(text string) error {
	if o.seen {
		return fmt.Errorf("--%s is given twice; give it once", o.name)
	}
	o.seen = true
	return o.Value.Set(text)
}

// String is safe on the zero value, which the flag package makes to find a flag's default.
func (o *onceValue) String() string {
	if o == nil || o.Value == nil {
		return ""
	}
	return o.Value.String()
}

// IsBoolFlag keeps a boolean flag usable without a value (--json).
func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// refuseRepeats makes every flag of fs but the repeatable ones an error when given twice.
func refuseRepeats(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if !repeatableFlags[f.Name] {
			if _, wrapped := f.Value.(*onceValue); !wrapped {
				f.Value = &onceValue{Value: f.Value, name: f.Name}
			}
		}
	})
}

// unwrapRepeats undoes refuseRepeats, so that the help prints each flag's own type and default.
func unwrapRepeats(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if o, ok := f.Value.(*onceValue); ok {
			f.Value = o.Value
		}
	})
}

// hideFlag removes a flag that a shared registration added to a command that does not take it,
// so that neither the help nor the parser knows it. The flag package has no removal, so the set
// is rebuilt without it.
func hideFlag(fs *flag.FlagSet, name string) {
	kept := flag.NewFlagSet(fs.Name(), fs.ErrorHandling())
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != name {
			kept.Var(f.Value, f.Name, f.Usage)
		}
	})
	*fs = *kept
	// The copied Usage is bound to the discarded set's output; simrun prints help itself.
	fs.Usage = func() {}
}
