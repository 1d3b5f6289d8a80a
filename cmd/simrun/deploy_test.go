package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The examples under deploy/ and .github/ are checked here, offline: schema checkers such as
// kubeconform fetch their schemas from the network, so the Job is decoded strictly into the
// official Go types instead, and the workflow into the shape GitHub Actions reads.

// maxSeedsPerPodLog bounds a Kubernetes shard: 30,000 passing seeds make about 5 MB of JSON lines,
// half the kubelet's default containerLogMaxSize, leaving room for failing seeds' longer lines.
const maxSeedsPerPodLog = 30_000

const (
	jobManifest   = "../../deploy/k8s/job.yaml"
	jobDockerfile = "../../deploy/k8s/Dockerfile"
	sweepWorkflow = "../../.github/workflows/sweep.yml"
)

// decodeJob decodes a manifest into batch/v1 Job, refusing any field the type does not have.
func decodeJob(data []byte) (*batchv1.Job, error) {
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(data, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

func TestJobManifestDecodesStrictlyRefusingUnknownFields(t *testing.T) {
	data, err := os.ReadFile(jobManifest)
	require.NoError(t, err)
	_, err = decodeJob(data)
	require.NoError(t, err)
	misspelt := strings.Replace(string(data), "completionMode:", "completionsMode:", 1)
	require.NotEqual(t, string(data), misspelt)
	_, err = decodeJob([]byte(misspelt))
	assert.ErrorContains(t, err, "completionsMode", "a misspelt field is refused, not ignored")
}

func TestJobManifestRunsEachShardOnceAndRetriesOnlyKilledPods(t *testing.T) {
	data, err := os.ReadFile(jobManifest)
	require.NoError(t, err)
	job, err := decodeJob(data)
	require.NoError(t, err)

	assert.Equal(t, "batch/v1", job.APIVersion)
	assert.Equal(t, "Job", job.Kind)
	spec := job.Spec
	require.NotNil(t, spec.CompletionMode)
	assert.Equal(t, batchv1.IndexedCompletion, *spec.CompletionMode)
	require.NotNil(t, spec.Completions)
	require.NotNil(t, spec.Parallelism)
	completions := int64(*spec.Completions)
	assert.Positive(t, *spec.Parallelism)
	assert.LessOrEqual(t, *spec.Parallelism, *spec.Completions, "at most one pod per shard at once")

	// A killed pod is retried for its own index; finished indexes are never rerun.
	require.NotNil(t, spec.BackoffLimitPerIndex, "retries are counted per index")
	assert.Positive(t, *spec.BackoffLimitPerIndex)
	assert.Equal(t, corev1.RestartPolicyNever, spec.Template.Spec.RestartPolicy, "backoffLimitPerIndex needs restartPolicy Never")
	require.NotNil(t, spec.PodReplacementPolicy)
	assert.Equal(t, batchv1.Failed, *spec.PodReplacementPolicy, "a replacement starts once the old pod is gone")
	require.NotNil(t, spec.PodFailurePolicy)
	actionForExit := map[int32]batchv1.PodFailurePolicyAction{}
	var ignoresDisruption bool
	for _, rule := range spec.PodFailurePolicy.Rules {
		if rule.OnExitCodes != nil {
			require.Equal(t, batchv1.PodFailurePolicyOnExitCodesOpIn, rule.OnExitCodes.Operator)
			for _, code := range rule.OnExitCodes.Values {
				actionForExit[code] = rule.Action
			}
		}
		for _, condition := range rule.OnPodConditions {
			ignoresDisruption = ignoresDisruption || condition.Type == corev1.DisruptionTarget && rule.Action == batchv1.PodFailurePolicyActionIgnore
		}
	}
	assert.Equal(t, batchv1.PodFailurePolicyActionFailIndex, actionForExit[exitFailure], "a shard that found failing seeds is not rerun")
	assert.Equal(t, batchv1.PodFailurePolicyActionFailJob, actionForExit[exitUsage], "bad usage stops the Job")
	assert.True(t, ignoresDisruption, "an evicted pod is retried without counting")

	containers := spec.Template.Spec.Containers
	require.Len(t, containers, 1)
	container := containers[0]
	for _, rule := range spec.PodFailurePolicy.Rules {
		if rule.OnExitCodes != nil {
			require.NotNil(t, rule.OnExitCodes.ContainerName)
			assert.Equal(t, container.Name, *rule.OnExitCodes.ContainerName)
		}
	}
	for _, resource := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		request, ok := container.Resources.Requests[resource]
		assert.True(t, ok && !request.IsZero(), "the pod requests %s", resource)
		limit, ok := container.Resources.Limits[resource]
		assert.True(t, ok && limit.Cmp(request) >= 0, "the %s limit is at least the request", resource)
	}

	// The container's arguments are a valid 'simrun run' whose shard is the pod's index out of
	// spec.completions, and whose output 'simrun merge' reads.
	require.NotEmpty(t, container.Args)
	require.Equal(t, "run", container.Args[0])
	for index := range completions {
		t.Setenv(jobCompletionIndexVariable, strconv.FormatInt(index, 10))
		fs, f := newRunFlags()
		require.NoError(t, fs.Parse(container.Args[1:]))
		require.Zero(t, fs.NArg())
		f.scenario.noteSet(fs)
		seeds, err := f.validate(f.scenario.set)
		require.NoError(t, err)
		_, err = f.scenario.options()
		require.NoError(t, err)
		assert.Equal(t, shard{index: index, count: completions}, seeds.shard, "pod %d runs shard %d/%d", index, index, completions)
		assert.True(t, f.json, "the pods print JSON lines for simrun merge")
		assert.True(t, f.quiet, "nothing but JSON lines in the pod's log")
		// The pod's log is the shard's output: it must stay below the kubelet's rotation size
		// (10 MiB by default), at about 165 bytes per passing seed.
		perShard := (seeds.count + completions - 1) / completions
		assert.LessOrEqual(t, perShard, int64(maxSeedsPerPodLog), "shard %d/%d has %d seeds; its log would be rotated", index, completions, perShard)
	}
}

func TestDockerfileBuildsAStaticBinaryOnAMinimalBase(t *testing.T) {
	data, err := os.ReadFile(jobDockerfile)
	require.NoError(t, err)
	text := string(data)
	var bases []string
	for _, line := range strings.Split(text, "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "FROM" {
			bases = append(bases, fields[1])
		}
	}
	require.Len(t, bases, 2, "a build stage and the image")
	final := bases[len(bases)-1]
	assert.True(t, final == "scratch" || strings.HasPrefix(final, "gcr.io/distroless/static"), "the image is %s", final)
	assert.Contains(t, text, "CGO_ENABLED=0", "a static binary: the base has no libc")
	assert.Contains(t, text, "./cmd/simrun")
	assert.Contains(t, text, `ENTRYPOINT ["/simrun"]`, "the Job's args follow the binary")
	assert.Contains(t, text, "-X main.linkedRevision=", "the build names its commit for simrun merge")
	_ = linkedRevision // The variable the Dockerfile sets must exist in package main.
}

// workflow is the part of a GitHub Actions workflow that the example's shape depends on.
type workflow struct {
	On   map[string]any         `yaml:"on"`
	Env  map[string]string      `yaml:"env"`
	Jobs map[string]workflowJob `yaml:"jobs"`
}

type workflowJob struct {
	Needs    any    `yaml:"needs"`
	RunsOn   string `yaml:"runs-on"`
	Strategy struct {
		FailFast *bool          `yaml:"fail-fast"`
		Matrix   map[string]any `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []struct {
		Uses string            `yaml:"uses"`
		Run  string            `yaml:"run"`
		With map[string]string `yaml:"with"`
	} `yaml:"steps"`
}

// needs returns a job's needs, which GitHub accepts as a string or a list.
func (j workflowJob) needs() []string {
	switch needs := j.Needs.(type) {
	case string:
		return []string{needs}
	case []any:
		var names []string
		for _, name := range needs {
			names = append(names, fmt.Sprint(name))
		}
		return names
	}
	return nil
}

func (j workflowJob) script() string {
	var b strings.Builder
	for _, step := range j.Steps {
		b.WriteString(step.Run + "\n")
	}
	return b.String()
}

func TestSweepWorkflowShardsThenMerges(t *testing.T) {
	data, err := os.ReadFile(sweepWorkflow)
	require.NoError(t, err)
	var w workflow
	// yaml.v3 reads "on" as a key, where YAML 1.1 decoders read it as true.
	require.NoError(t, yamlv3.Unmarshal(data, &w))
	assert.Contains(t, w.On, "pull_request", "it runs on every pull request")

	shardJob, ok := w.Jobs["shard"]
	require.True(t, ok, "a shard job")
	mergeJob, ok := w.Jobs["merge"]
	require.True(t, ok, "a merge job")
	for name, job := range w.Jobs {
		assert.NotEmpty(t, job.RunsOn, "job %s says where it runs", name)
		assert.NotEmpty(t, job.Steps, "job %s has steps", name)
	}

	matrix, ok := shardJob.Strategy.Matrix["shard"].([]any)
	require.True(t, ok, "a matrix of shards: %v", shardJob.Strategy.Matrix)
	shards, err := strconv.Atoi(w.Env["SHARDS"])
	require.NoError(t, err, "SHARDS names the shard count")
	require.Len(t, matrix, shards, "one matrix entry per shard")
	for i, entry := range matrix {
		assert.Equal(t, i, entry, "the matrix lists the shard indexes 0..n-1 in order")
	}
	require.NotNil(t, shardJob.Strategy.FailFast)
	assert.False(t, *shardJob.Strategy.FailFast, "a shard that finds a failure does not cancel the others")
	sweep := shardJob.script()
	assert.Contains(t, sweep, "simrun run --time-limit")
	assert.Contains(t, sweep, "--shard ${{ matrix.shard }}/$SHARDS")
	assert.Contains(t, sweep, "--json")
	assert.Contains(t, w.Env["TIME_LIMIT"], "10m")
	assert.Contains(t, w.Env["SEED_START"], "github.run_id", "fresh seeds on every run")

	assert.Contains(t, mergeJob.needs(), "shard", "the merge waits for every shard")
	assert.True(t, slices.Contains(shardJob.needs(), "build"), "the shards run the binary the build job made")
	assert.Contains(t, mergeJob.script(), "simrun merge shard-*.jsonl")
	assert.Equal(t, filepath.Base(sweepWorkflow), "sweep.yml")
}
