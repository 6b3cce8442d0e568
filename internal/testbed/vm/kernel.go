package vm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ulikunitz/xz"
)

// Kernel is a kernel unpacked from a Debian linux-image package.
type Kernel struct {
	Release string // e.g. 6.12.117+deb12-cloud-amd64
	Image   string // the bootable image: vmlinux (PVH, faster) or vmlinuz
	Modules string // lib/modules/RELEASE
}

// ErrNoKernel is wrapped by LoadKernel's error when the image is missing.
var ErrNoKernel = errors.New("kernel image not found")

// LoadKernel finds kernel release in root, the directory of the package
// unpacked with dpkg -x (root/boot/vmlinuz-RELEASE and
// root/lib/modules/RELEASE); an uncompressed root/boot/vmlinux-RELEASE is
// preferred when present (QEMU boots it through PVH, skipping the
// decompressor).
func LoadKernel(root, release string) (*Kernel, error) {
	k := &Kernel{Release: release, Modules: filepath.Join(root, "lib", "modules", release)}
	for _, name := range []string{"vmlinux-" + release, "vmlinuz-" + release} {
		p := filepath.Join(root, "boot", name)
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			k.Image = p
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w: no %s/boot/vmlinuz-%s (fetch it with scripts/fetch-kernel.sh)", ErrNoKernel, root, release)
}

// ModuleDeps resolves module names (as modprobe takes them, "veth",
// "sch_etf") to their files, dependencies first, each once. Paths are
// relative to k.Modules. It reads modules.dep where depmod made one, and
// otherwise the "depends=" entry of each module's .modinfo (a package
// unpacked with dpkg -x has no modules.dep).
func (k *Kernel) ModuleDeps(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	deps, err := k.depTable()
	if err != nil {
		return nil, err
	}
	var order []string
	seen := map[string]bool{}
	var visit func(name string, depth int) error
	visit = func(name string, depth int) error {
		name = strings.ReplaceAll(name, "-", "_")
		if seen[name] || depth > 64 {
			return nil
		}
		file, dd, err := deps(name)
		if err != nil {
			return err
		}
		seen[name] = true
		for _, dep := range dd {
			if err := visit(dep, depth+1); err != nil {
				return err
			}
		}
		order = append(order, file)
		return nil
	}
	for _, n := range names {
		if err := visit(n, 0); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// depTable returns a lookup of a module's file and the names of the
// modules it depends on.
func (k *Kernel) depTable() (func(name string) (string, []string, error), error) {
	notFound := func(name string) error {
		return fmt.Errorf("kernel %s: no module %q (built in, or not in this kernel?)", k.Release, name)
	}
	if f, err := os.Open(filepath.Join(k.Modules, "modules.dep")); err == nil {
		defer f.Close()
		table := map[string][]string{}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			file, rest, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			table[moduleName(file)] = append([]string{file}, strings.Fields(rest)...)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return func(name string) (string, []string, error) {
			d, ok := table[name]
			if !ok {
				return "", nil, notFound(name)
			}
			var names []string
			for _, dep := range d[1:] {
				names = append(names, moduleName(dep))
			}
			return d[0], names, nil
		}, nil
	}
	files := map[string]string{}
	err := filepath.WalkDir(k.Modules, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.Contains(d.Name(), ".ko") {
			rel, _ := filepath.Rel(k.Modules, p)
			files[moduleName(rel)] = filepath.ToSlash(rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Release, err)
	}
	return func(name string) (string, []string, error) {
		rel, ok := files[name]
		if !ok {
			return "", nil, notFound(name)
		}
		dd, err := modinfoDepends(filepath.Join(k.Modules, rel))
		return rel, dd, err
	}, nil
}

// modinfoDepends reads the "depends=" entry of a module's .modinfo
// (NUL-separated key=value strings), decompressing a .ko.xz.
func modinfoDepends(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".xz") {
		if r, err = xz.NewReader(bufio.NewReader(f)); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	} else if !strings.HasSuffix(path, ".ko") {
		return nil, fmt.Errorf("%s: only .ko and .ko.xz modules are read here", path)
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	i := bytes.Index(b, []byte("\x00depends="))
	if i < 0 {
		return nil, nil
	}
	v := b[i+len("\x00depends="):]
	if j := bytes.IndexByte(v, 0); j >= 0 {
		v = v[:j]
	}
	var names []string
	for _, n := range strings.Split(string(v), ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, strings.ReplaceAll(n, "-", "_"))
		}
	}
	return names, nil
}

// moduleName is the module name of a module file path: kernel/net/sched/sch_etf.ko.xz → sch_etf.
func moduleName(file string) string {
	b := path.Base(file)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}
