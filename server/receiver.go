package server

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/job"
)

// What start_receiver does, backend by backend (docs/api.md, "A receiver
// of the job's own"):
//
//   - a local or device path that needs a receiving process (shm, pipe,
//     unix, cma, xpmem, udmabuf): the run starts wpg recv (job.Spec's
//     StartReceiver), unless it is given connect or fifo;
//   - a network backend that sends on an interface (afpacket, afxdp,
//     pcap, dpdk): the run receives on a second port, a port pair
//     (job.Spec.RxInterface): the one rx_interface names, or else the veth
//     peer of interface, found wherever it is (this namespace or one of
//     /run/netns), which the spec then names as rx_interface and rx_netns;
//     an interface that is no veth, or whose peer is in no named
//     namespace, is refused: the server cannot tell which port receives;
//   - a backend whose frames go nowhere a receiver could count them (null,
//     memcpy) or into a file (pcapfile): refused.
//
// Every refusal is a problem of field start_receiver that says what to
// give instead; start_receiver is never ignored.

// receiverFor applies start_receiver to spec (given it), rewriting it to
// name the receiving port where the server finds it; a problem where it
// cannot apply.
func receiverFor(spec *job.Spec) *job.OptionError {
	if !spec.StartReceiver {
		return nil
	}
	reg, err := backend.Lookup(spec.BackendName())
	if err != nil {
		return nil // job.Validate names the backend
	}
	refuse := func(reason, fix string) *job.OptionError {
		return &job.OptionError{Field: "start_receiver", Reason: reason, Fix: fix}
	}
	switch {
	case reg.NeedsPeer:
		return nil // the run starts wpg recv
	case reg.Name == "pcapfile":
		return refuse("backend pcapfile writes the frames into a capture file, and no receiver reads it while the job runs",
			"drop {start_receiver}: the capture file is there to read once the job has ended")
	case reg.Kind != backend.KindNetwork:
		return refuse(fmt.Sprintf("backend %s sends its frames nowhere a receiver could count them", reg.Name),
			"drop {start_receiver}, or send where a receiver counts the frames: a local path ({backend} shm, pipe, unix or cma: the server starts wpg recv) or a network port with {rx_interface}, the port that receives")
	case spec.RxInterface != "":
		return nil // a port pair: the run receives on rx_interface
	case spec.Interface == "":
		return refuse(fmt.Sprintf("backend %s receives on a second port, and the job names neither the port it sends on nor the one that receives", reg.Name),
			"give {interface} IFACE (a veth: the server receives on its peer) or {rx_interface} PORT, the port that receives")
	}
	peer, netns, err := vethPeer(spec.Interface, spec.Netns)
	var notVeth *notVethError
	switch {
	case errors.Is(err, errNoInterface):
		// Nothing else looks before the run: the job would start, with
		// no receiver named, and fail.
		where := "the server's network namespace"
		if spec.Netns != "" {
			where = "network namespace " + spec.Netns
		}
		var names []string
		if links, err := linksIn(spec.Netns); err == nil {
			for _, l := range links {
				if len(names) == 16 {
					names = append(names, "…")
					break
				}
				names = append(names, l.Name)
			}
		}
		return refuse(fmt.Sprintf("there is no interface %s in %s, so there is no veth peer to receive on", spec.Interface, where),
			fmt.Sprintf("give {interface} IFACE, a port that is there (%s), or {rx_interface} PORT, the port that receives", strings.Join(names, ", ")))
	case errors.As(err, &notVeth):
		return refuse(fmt.Sprintf("interface %s is not a veth (%s), so the server cannot tell which port receives what it sends", spec.Interface, notVeth.what()),
			"give {rx_interface} PORT, the port that receives (the device's other port; with {rx_netns} NS where it is in another namespace), or drop {start_receiver}")
	case err != nil:
		return refuse(fmt.Sprintf("the server could not find the peer of veth %s: %v", spec.Interface, err),
			"give {rx_interface} PEER, the veth's other end (with {rx_netns} NS where it is in another namespace), or drop {start_receiver}")
	}
	spec.RxInterface, spec.RxNetns = peer, netns
	return nil
}

// errNoInterface is vethPeer's answer for an interface that is not there.
var errNoInterface = errors.New("no such interface")

// notVethError is vethPeer's answer for an interface that is no veth.
type notVethError struct{ kind string }

func (e *notVethError) Error() string { return "not a veth: " + e.what() }

func (e *notVethError) what() string {
	if e.kind == "" {
		return "a device of no kind: a NIC, or lo"
	}
	return "its kind is " + e.kind
}

// netnsDir holds the named network namespaces (ip netns).
const netnsDir = "/run/netns"

// netnsFile is the file of namespace ns as job.Spec names it: a name of
// ip netns, or a path.
func netnsFile(ns string) string {
	if strings.Contains(ns, "/") {
		return ns
	}
	return netnsDir + "/" + ns
}

// linksIn lists the interfaces of namespace ns ("": the server's own).
func linksIn(ns string) ([]sys.Link, error) {
	if ns == "" {
		return sys.Links()
	}
	var links []sys.Link
	err := sys.RunInNetns(netnsFile(ns), func() error {
		var err error
		links, err = sys.Links()
		return err
	})
	return links, err
}

// vethPeer finds the other end of veth iface, which lives in namespace
// netns ("": the server's own): its name and its namespace, "" for the
// server's own or a name of ip netns. A peer in another namespace is
// looked for in the server's own and in each of /run/netns, and is the
// interface there whose index is iface's peer index and whose peer is
// iface (a veth pointing back, across namespaces): entering them needs
// CAP_SYS_ADMIN.
func vethPeer(iface, netns string) (peer, peerNetns string, err error) {
	links, err := linksIn(netns)
	if err != nil {
		return "", "", err
	}
	i := slices.IndexFunc(links, func(l sys.Link) bool { return l.Name == iface })
	if i < 0 {
		return "", "", errNoInterface
	}
	me := links[i]
	if me.Kind != "veth" {
		return "", "", &notVethError{kind: me.Kind}
	}
	if !me.PeerElsewhere {
		if j := slices.IndexFunc(links, func(l sys.Link) bool { return l.Index == me.PeerIndex }); j >= 0 {
			return links[j].Name, netns, nil
		}
		return "", "", fmt.Errorf("its peer, interface index %d, is not in its namespace", me.PeerIndex)
	}
	candidates := []string{""}
	if ents, err := os.ReadDir(netnsDir); err == nil {
		for _, e := range ents {
			candidates = append(candidates, e.Name())
		}
	}
	type found struct{ name, ns string }
	var hits []found
	var errs []string
	for _, ns := range candidates {
		if ns == netns {
			continue
		}
		ls, err := linksIn(ns)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		for _, l := range ls {
			if l.Index == me.PeerIndex && l.Kind == "veth" && l.PeerIndex == me.Index && l.PeerElsewhere {
				hits = append(hits, found{l.Name, ns})
			}
		}
	}
	switch len(hits) {
	case 1:
		return hits[0].name, hits[0].ns, nil
	case 0:
		why := fmt.Sprintf("its peer is in another namespace, and none of this server's own and those of %s has it", netnsDir)
		if errs != nil {
			why += " (" + strings.Join(errs, "; ") + ")"
		}
		return "", "", errors.New(why)
	}
	var where []string
	for _, h := range hits {
		where = append(where, fmt.Sprintf("%s in %q", h.name, h.ns))
	}
	return "", "", fmt.Errorf("its peer could be any of %s", strings.Join(where, ", "))
}
