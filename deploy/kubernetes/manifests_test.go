package kubernetes

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/wpg-dev/wpg/cmd/wpg/cli"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// kustomization is the part of kustomize's Kustomization these folders
// use (kustomize's own types are not a dependency): decoding strictly
// into it refuses a key it does not name, a misspelt one included.
type kustomization struct {
	APIVersion         string   `json:"apiVersion"`
	Kind               string   `json:"kind"`
	Namespace          string   `json:"namespace,omitempty"`
	Resources          []string `json:"resources"`
	ConfigMapGenerator []struct {
		Name  string   `json:"name"`
		Files []string `json:"files"`
	} `json:"configMapGenerator,omitempty"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
	Patches []struct {
		Path   string `json:"path"`
		Target struct {
			Group   string `json:"group"`
			Version string `json:"version"`
			Kind    string `json:"kind"`
			Name    string `json:"name"`
		} `json:"target"`
	} `json:"patches,omitempty"`
}

// podMonitor is the part of the Prometheus Operator's PodMonitor
// (monitoring.coreos.com/v1) wpg's uses, on the Kubernetes metadata and
// label selector types.
type podMonitor struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Selector            metav1.LabelSelector `json:"selector"`
		PodMetricsEndpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path"`
			Interval    string `json:"interval"`
			HonorLabels bool   `json:"honorLabels"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// scrapeConfig is the part of a Prometheus configuration file
// prometheus/scrape-config.yaml holds; promtool checks the whole of it
// (TestScrapeConfigPromtool).
type scrapeConfig struct {
	ScrapeConfigs []struct {
		JobName             string `json:"job_name"`
		ScrapeInterval      string `json:"scrape_interval"`
		HonorLabels         bool   `json:"honor_labels"`
		KubernetesSDConfigs []struct {
			Role       string `json:"role"`
			Namespaces struct {
				Names []string `json:"names"`
			} `json:"namespaces"`
		} `json:"kubernetes_sd_configs"`
		RelabelConfigs []struct {
			SourceLabels []string `json:"source_labels"`
			Regex        string   `json:"regex,omitempty"`
			Action       string   `json:"action,omitempty"`
			TargetLabel  string   `json:"target_label,omitempty"`
		} `json:"relabel_configs"`
	} `json:"scrape_configs"`
}

// manifests decodes every YAML file under the folder strictly, by its
// kind, and returns them by path. Every file must be one of the kinds
// the folder is meant to hold.
type manifests struct {
	jobs     map[string]*batchv1.Job
	kust     map[string]*kustomization
	monitors map[string]*podMonitor
	scrape   map[string]*scrapeConfig
	ns       map[string]*corev1.Namespace
	// templates are the wpg templates a configMapGenerator ships.
	templates map[string]bool
}

func load(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{jobs: map[string]*batchv1.Job{}, kust: map[string]*kustomization{}, monitors: map[string]*podMonitor{},
		scrape: map[string]*scrapeConfig{}, ns: map[string]*corev1.Namespace{}, templates: map[string]bool{}}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte("\n---")) {
			return fmt.Errorf("%s: one document per file, please", path)
		}
		strict := func(v any) error {
			if err := yaml.UnmarshalStrict(b, v); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		}
		if strings.HasSuffix(path, ".wpg.yaml") {
			m.templates[path] = true
			return nil
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(b, &head); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		switch head.Kind {
		case "Job":
			var j batchv1.Job
			m.jobs[path] = &j
			return strict(&j)
		case "Kustomization":
			var k kustomization
			m.kust[path] = &k
			return strict(&k)
		case "PodMonitor":
			var p podMonitor
			m.monitors[path] = &p
			return strict(&p)
		case "Namespace":
			var n corev1.Namespace
			m.ns[path] = &n
			return strict(&n)
		case "":
			var s scrapeConfig
			m.scrape[path] = &s
			return strict(&s)
		}
		return fmt.Errorf("%s: kind %q: this folder holds Jobs, a Namespace, a PodMonitor, kustomizations and a scrape configuration", path, head.Kind)
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestManifestsDecodeStrictly decodes every manifest into its API type,
// refusing unknown fields (a misspelt key is silently dropped by
// kubectl apply with client-side validation off), and checks that every
// file is listed by a kustomization and every path a kustomization
// names exists.
func TestManifestsDecodeStrictly(t *testing.T) {
	m := load(t)
	if len(m.jobs) != 3 || len(m.kust) != 3 || len(m.monitors) != 1 || len(m.scrape) != 1 || len(m.ns) != 1 || len(m.templates) != 1 {
		t.Fatalf("decoded %d jobs, %d kustomizations, %d pod monitors, %d scrape configs, %d namespaces, %d templates; want 3, 3, 1, 1, 1, 1",
			len(m.jobs), len(m.kust), len(m.monitors), len(m.scrape), len(m.ns), len(m.templates))
	}
	listed := map[string]bool{}
	for path, k := range m.kust {
		dir := filepath.Dir(path)
		if k.APIVersion != "kustomize.config.k8s.io/v1beta1" {
			t.Errorf("%s: apiVersion %q", path, k.APIVersion)
		}
		var refs []string
		refs = append(refs, k.Resources...)
		for _, g := range k.ConfigMapGenerator {
			refs = append(refs, g.Files...)
		}
		for _, p := range k.Patches {
			refs = append(refs, p.Path)
			patch := m.jobs[filepath.Join(dir, p.Path)]
			if patch == nil || p.Target.Kind != "Job" || p.Target.Group != "batch" || p.Target.Name != patch.Name {
				t.Errorf("%s: patch %s does not target the Job it patches", path, p.Path)
			}
		}
		for _, r := range refs {
			full := filepath.Join(dir, r)
			if _, err := os.Stat(full); err != nil {
				t.Errorf("%s: %s: %v", path, r, err)
			}
			listed[full] = true
		}
	}
	all := []string{}
	for p := range m.jobs {
		all = append(all, p)
	}
	for p := range m.monitors {
		all = append(all, p)
	}
	for p := range m.ns {
		all = append(all, p)
	}
	for p := range m.templates {
		all = append(all, p)
	}
	for _, p := range all {
		if !listed[p] {
			t.Errorf("%s: no kustomization lists it", p)
		}
	}
}

// container is the Job's one container (wpg).
func container(t *testing.T, path string, j *batchv1.Job) *corev1.Container {
	t.Helper()
	if n := len(j.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%s: %d containers, want wpg's one", path, n)
	}
	return &j.Spec.Template.Spec.Containers[0]
}

// arg returns the value of --name in args (--name=value), "" when absent.
func arg(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

func env(c *corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

// capsFor are the capabilities each backend's sender and receiver need,
// and no more (docs/distributed.md).
var capsFor = map[string][]string{
	"afpacket": {"NET_RAW"},
	"dpdk":     {"IPC_LOCK", "NET_RAW"},
}

// TestSenderJob checks the fields wpg relies on in the senders' Indexed
// Job and the receiver's Job: --segment auto with completions =
// parallelism = WPG_SEGMENTS, Guaranteed QoS with whole CPUs, hostNetwork,
// the capabilities of the backend and no more, and the metrics port of
// --metrics-listen as the container's port named metrics, and one --job
// in the senders and the receiver.
func TestSenderJob(t *testing.T) {
	m := load(t)
	base := m.jobs[filepath.Join("base", "sender-job.yaml")]
	dpdk := m.jobs[filepath.Join("overlays", "dpdk", "sender-dpdk.yaml")]
	rcv := m.jobs[filepath.Join("receiver", "receiver-job.yaml")]
	if base == nil || dpdk == nil || rcv == nil {
		t.Fatal("base/sender-job.yaml, overlays/dpdk/sender-dpdk.yaml and receiver/receiver-job.yaml must hold Jobs")
	}
	bc := container(t, "base", base)

	// The Indexed Job.
	s := base.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("base: completionMode %v, want Indexed (JOB_COMPLETION_INDEX is the segment)", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
		t.Errorf("base: completions %d, parallelism %d: want them equal, every segment at once", deref(s.Completions), deref(s.Parallelism))
	}
	if e, ok := env(bc, "WPG_SEGMENTS"); !ok || s.Completions == nil || e.Value != strconv.Itoa(int(*s.Completions)) {
		t.Errorf("base: WPG_SEGMENTS %q, want the completions (%d)", e.Value, deref(s.Completions))
	}
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 {
		t.Errorf("base: backoffLimit %d, want 0: a segment run again sends its frames twice", deref(s.BackoffLimit))
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("base: restartPolicy %q, want Never", s.Template.Spec.RestartPolicy)
	}
	// One pod per node: the anti-affinity selects the senders' own labels.
	aa := s.Template.Spec.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatal("base: want one required pod anti-affinity term (one segment per node)")
	}
	term := aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if term.TopologyKey != "kubernetes.io/hostname" || !selects(term.LabelSelector.MatchLabels, s.Template.Labels) {
		t.Errorf("base: anti-affinity %+v does not keep the senders on distinct nodes", term)
	}

	jobs := map[string]string{} // --job of each Job
	for _, c := range []struct {
		name    string
		job     *batchv1.Job
		ctr     *corev1.Container // the container as deployed (a patch's args replace the base's)
		backend string
		command string
	}{
		{"base", base, bc, "afpacket", "send"},
		{"dpdk", dpdk, container(t, "dpdk", dpdk), "dpdk", "send"},
		{"receiver", rcv, container(t, "receiver", rcv), "afpacket", "recv"},
	} {
		ctr := c.ctr
		if len(ctr.Args) == 0 || ctr.Args[0] != c.command {
			t.Errorf("%s: args %q, want wpg %s", c.name, ctr.Args, c.command)
		}
		if got := arg(ctr.Args, "backend"); got != "" && got != c.backend || got == "" && c.backend != "afpacket" {
			t.Errorf("%s: --backend %q, want %s", c.name, got, c.backend)
		}
		jobs[c.name] = arg(ctr.Args, "job")
		if c.command == "send" && arg(ctr.Args, "segment") != "auto" {
			t.Errorf("%s: args %q: want --segment=auto", c.name, ctr.Args)
		}
		// Capabilities: all dropped, the backend's added.
		sc := ctr.SecurityContext
		if sc == nil || sc.Capabilities == nil {
			t.Errorf("%s: no securityContext.capabilities", c.name)
			continue
		}
		if len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("%s: drop %v, want [ALL]", c.name, sc.Capabilities.Drop)
		}
		var add []string
		for _, a := range sc.Capabilities.Add {
			add = append(add, string(a))
		}
		slices.Sort(add)
		if !slices.Equal(add, capsFor[c.backend]) {
			t.Errorf("%s: capabilities %v, want %v for %s", c.name, add, capsFor[c.backend], c.backend)
		}
		if ape := sc.AllowPrivilegeEscalation; ape != nil && *ape || ape == nil && c.name != "dpdk" { // the patch keeps the base's
			t.Errorf("%s: allowPrivilegeEscalation must be false", c.name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s: privileged", c.name)
		}
		// Guaranteed QoS: requests = limits, whole CPUs (the static CPU
		// manager pins only those).
		r := ctr.Resources
		if len(r.Requests) == 0 || len(r.Requests) != len(r.Limits) {
			t.Errorf("%s: requests %v, limits %v: want the same resources in both", c.name, r.Requests, r.Limits)
		}
		for name, q := range r.Requests {
			if l, ok := r.Limits[name]; !ok || l.Cmp(q) != 0 {
				t.Errorf("%s: %s requested %s, limited %s: want them equal (Guaranteed QoS)", c.name, name, q.String(), l.String())
			}
		}
		if cpu, ok := r.Requests[corev1.ResourceCPU]; !ok || cpu.MilliValue()%1000 != 0 {
			t.Errorf("%s: cpu %s: want whole CPUs", c.name, cpu.String())
		}
		if _, ok := r.Requests[corev1.ResourceMemory]; !ok {
			t.Errorf("%s: no memory request", c.name)
		}
		// The metrics port.
		listen := arg(ctr.Args, "metrics-listen")
		_, port, ok := strings.Cut(listen, ":")
		if !ok {
			t.Errorf("%s: --metrics-listen %q, want ADDR:PORT", c.name, listen)
		}
		found := false
		for _, p := range c.ctr.Ports {
			if p.Name == "metrics" && strconv.Itoa(int(p.ContainerPort)) == port && p.Protocol == corev1.ProtocolTCP {
				found = true
			}
		}
		if c.name != "dpdk" && !found { // the patch keeps the base's ports
			t.Errorf("%s: no TCP port named metrics at %s (--metrics-listen %s)", c.name, port, listen)
		}
		if c.name == "dpdk" && port != portOf(t, bc) {
			t.Errorf("dpdk: --metrics-listen port %s, the base's container port is %s", port, portOf(t, bc))
		}
		envCtr := ctr
		if c.name == "dpdk" {
			envCtr = bc // the patch keeps the base's variables
		}
		if e, ok := env(envCtr, "POD_IP"); !strings.HasPrefix(listen, "$(POD_IP):") || !ok || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "status.podIP" {
			t.Errorf("%s: --metrics-listen %q: want $(POD_IP):PORT, POD_IP from status.podIP (the node's address under hostNetwork)", c.name, listen)
		}
		if c.name != "dpdk" && !c.job.Spec.Template.Spec.HostNetwork {
			t.Errorf("%s: hostNetwork false: wpg sends and receives on the node's interfaces", c.name)
		}
		if !strings.Contains(strings.Join(ctr.Args, " "), "--json") {
			t.Errorf("%s: no --json: the report in the pod's log is what wpg report merge reads", c.name)
		}
	}

	// One job label for the senders and the receiver, so that PromQL
	// compares them by job.
	if jobs["base"] == "" || jobs["dpdk"] != jobs["base"] || jobs["receiver"] != jobs["base"] {
		t.Errorf("--job: base %q, dpdk %q, receiver %q: want one name in all three (the job label the receiver's series share with the senders')", jobs["base"], jobs["dpdk"], jobs["receiver"])
	}

	// dpdk: hugepages requested = limited, from a HugePages volume.
	dc := container(t, "dpdk", dpdk)
	hp, ok := dc.Resources.Requests["hugepages-2Mi"]
	if !ok || hp.IsZero() {
		t.Error("dpdk: no hugepages-2Mi request")
	}
	vols := dpdk.Spec.Template.Spec.Volumes
	if len(vols) != 1 || vols[0].EmptyDir == nil || vols[0].EmptyDir.Medium != "HugePages-2Mi" {
		t.Errorf("dpdk: volumes %+v, want one emptyDir of medium HugePages-2Mi", vols)
	}
	if len(dc.VolumeMounts) != 1 || !strings.Contains(arg(dc.Args, "dpdk-args"), "--huge-dir "+dc.VolumeMounts[0].MountPath) {
		t.Errorf("dpdk: --dpdk-args %q should name the hugepages mount as --huge-dir", arg(dc.Args, "dpdk-args"))
	}

	// The template the base mounts is the one its kustomization ships.
	k := m.kust[filepath.Join("base", "kustomization.yaml")]
	vs := s.Template.Spec.Volumes
	if len(vs) != 1 || vs[0].ConfigMap == nil || len(k.ConfigMapGenerator) != 1 || vs[0].ConfigMap.Name != k.ConfigMapGenerator[0].Name {
		t.Errorf("base: volumes %+v do not mount the kustomization's generated ConfigMap", vs)
	} else if tpl := bc.Args[1]; tpl != filepath.Join(bc.VolumeMounts[0].MountPath, k.ConfigMapGenerator[0].Files[0]) {
		t.Errorf("base: template argument %s is not the ConfigMap's file", tpl)
	}
}

// deref is *p, -1 for nil.
func deref(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}

func portOf(t *testing.T, c *corev1.Container) string {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			return strconv.Itoa(int(p.ContainerPort))
		}
	}
	t.Fatal("no port named metrics")
	return ""
}

// selects reports whether every label of sel is in labels.
func selects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestScrapeTargets checks that the PodMonitor and the plain scrape job
// find the pods the Jobs make, by their labels and the port name, and
// honor wpg's job label (the job identity every segment shares).
func TestScrapeTargets(t *testing.T) {
	m := load(t)
	var pm *podMonitor
	for _, p := range m.monitors {
		pm = p
	}
	if pm.APIVersion != "monitoring.coreos.com/v1" {
		t.Errorf("PodMonitor apiVersion %q", pm.APIVersion)
	}
	for path, j := range m.jobs {
		if strings.Contains(path, "overlays") {
			continue // a patch: the base's labels stand
		}
		if !selects(pm.Spec.Selector.MatchLabels, j.Spec.Template.Labels) {
			t.Errorf("the PodMonitor's selector %v misses the pods of %s (%v)", pm.Spec.Selector.MatchLabels, path, j.Spec.Template.Labels)
		}
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 || pm.Spec.PodMetricsEndpoints[0].Port != "metrics" || !pm.Spec.PodMetricsEndpoints[0].HonorLabels || pm.Spec.PodMetricsEndpoints[0].Path != "/metrics" {
		t.Errorf("PodMonitor endpoints %+v: want port metrics, path /metrics, honorLabels", pm.Spec.PodMetricsEndpoints)
	}
	for path, sc := range m.scrape {
		if len(sc.ScrapeConfigs) != 1 {
			t.Fatalf("%s: %d scrape jobs, want 1", path, len(sc.ScrapeConfigs))
		}
		j := sc.ScrapeConfigs[0]
		if !j.HonorLabels || len(j.KubernetesSDConfigs) != 1 || j.KubernetesSDConfigs[0].Role != "pod" || !slices.Equal(j.KubernetesSDConfigs[0].Namespaces.Names, []string{"wpg"}) {
			t.Errorf("%s: want honor_labels and pod discovery in namespace wpg: %+v", path, j)
		}
		keeps := map[string]string{}
		for _, r := range j.RelabelConfigs {
			if r.Action == "keep" && len(r.SourceLabels) == 1 {
				keeps[r.SourceLabels[0]] = r.Regex
			}
		}
		if keeps["__meta_kubernetes_pod_label_app_kubernetes_io_name"] != "wpg" || keeps["__meta_kubernetes_pod_container_port_name"] != "metrics" {
			t.Errorf("%s: keeps %v: want the pods labelled app.kubernetes.io/name=wpg, port metrics", path, keeps)
		}
	}
	for path, n := range m.ns {
		for kp, k := range m.kust {
			if k.Namespace != "" && k.Namespace != n.Name {
				t.Errorf("%s puts everything in %s, %s makes %s", kp, k.Namespace, path, n.Name)
			}
		}
	}
}

// TestScrapeConfigPromtool has Prometheus's own checker read the scrape
// configuration. Debian builds Prometheus without Kubernetes service
// discovery: there promtool reads it with the discovery replaced by a
// static target, which still checks everything else (the relabelling,
// honor_labels, the interval).
func TestScrapeConfigPromtool(t *testing.T) {
	promtool := testbed.RequireTool(t, "promtool", "prometheus")
	path := filepath.Join("prometheus", "scrape-config.yaml")
	check := func(path string) (string, error) {
		out, err := exec.Command(promtool, "check", "config", "--syntax-only", path).CombinedOutput()
		return string(out), err
	}
	out, err := check(path)
	if err != nil && strings.Contains(out, "field kubernetes_sd_configs not found") {
		b, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		sd := regexp.MustCompile(`(?m)^    kubernetes_sd_configs:\n(      .*\n)+`)
		if !sd.Match(b) {
			t.Fatal("no kubernetes_sd_configs block to replace")
		}
		static := sd.ReplaceAll(b, []byte("    static_configs:\n      - targets: [\"198.18.0.1:9479\"]\n"))
		tmp := filepath.Join(t.TempDir(), "scrape-config.yaml")
		if err := os.WriteFile(tmp, static, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("this promtool has no Kubernetes discovery (Debian's build): checking the configuration with a static target instead")
		out, err = check(tmp)
	}
	if err != nil || !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}

// TestArgsAreWpgs parses every container's args with wpg's own command
// line, $(VAR) expanded from the container's environment as Kubernetes
// expands it: a flag wpg does not have, or a value it refuses at parse
// time, fails here rather than in a pod.
func TestArgsAreWpgs(t *testing.T) {
	m := load(t)
	base := container(t, "base", m.jobs[filepath.Join("base", "sender-job.yaml")])
	vars := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	for path, j := range m.jobs {
		c := container(t, path, j)
		env := map[string]string{"POD_IP": "198.18.0.1"}
		for _, cc := range []*corev1.Container{base, c} { // a patch keeps the base's variables
			for _, e := range cc.Env {
				if e.ValueFrom == nil {
					env[e.Name] = e.Value
				}
			}
		}
		var args []string
		for _, a := range c.Args {
			args = append(args, vars.ReplaceAllStringFunc(a, func(v string) string {
				name := vars.FindStringSubmatch(v)[1]
				val, ok := env[name]
				if !ok {
					t.Errorf("%s: $(%s) is not in the container's environment", path, name)
				}
				return val
			}))
		}
		root := cli.NewRoot()
		cmd, rest, err := root.Find(args)
		if err != nil || cmd == root {
			t.Errorf("%s: wpg %s: no such command (%v)", path, strings.Join(args, " "), err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%s: wpg %s: %v", path, strings.Join(args, " "), err)
		}
	}
}
