// Package conform is zabsim's conformance format with the real ZooKeeper server: sequences of
// client operations as JSON lines (Parse, ParseFile, WriteOps), their results as JSON lines
// (WriteResults, ReadResultsFile), a simulated runner (Simulate: a standalone zabsim server driven
// by clients that behave as go-zookeeper does), random sequences for rapid (SequenceWith), and the
// comparison of two servers' results (Normalize ranks zxids and zeroes times; Compare lists every
// field that differs). internal/realzk runs the same sequences against the real server.
//
//	ops, err := conform.ParseFile("testdata/set_get.jsonl")
//	if err != nil {
//		return err // the error names the line
//	}
//	simulated, err := conform.Simulate(conform.SimOptions{Seed: 1}, ops)
//	if err != nil {
//		return err
//	}
//	want, _ := conform.ReadResultsFile("testdata/set_get.real.jsonl")
//	diffs := conform.Compare(want, conform.Normalize(simulated))
//	fmt.Print(conform.Report(diffs))
//
// The format is documented in the README ("Conformance with the real server").
package conform
