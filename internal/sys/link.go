package sys

// Link is a network interface as RTM_GETLINK reports it to the calling
// thread's network namespace.
type Link struct {
	Index int
	Name  string
	// Kind is the link's type (IFLA_INFO_KIND): "veth", "bridge", …; ""
	// for a device without one (a NIC, lo).
	Kind string
	// PeerIndex is the interface this one is bound to (IFLA_LINK): a
	// veth's other end; 0 when none. PeerElsewhere is true when that
	// interface is in another network namespace (IFLA_LINK_NETNSID is
	// given), where PeerIndex is its index.
	PeerIndex     int
	PeerElsewhere bool
}
