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
