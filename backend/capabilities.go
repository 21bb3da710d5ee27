package backend

// The questions a command asks instead of "is this the demo?": each answer
// is written here once, with the reason the two environments differ.

// HasCluster tells whether the fleet lives in clusters a kubeconfig names:
// their contexts can be listed and checked, a completion can ask the
// cluster, and connecting is a round trip worth announcing. In the demo
// every context name is a simulated fleet of its own, in this process.
func (e *Env) HasCluster() bool { return !e.Demo() }

// CanForward tells whether a sandbox's ports can be forwarded and files
// copied (tar) into and out of it: the demo's simulated Pods have neither.
func (e *Env) CanForward() bool { return !e.Demo() }

// NeedsToken tells whether the exec daemons want execd's access token: the
// demo's simulated daemons ask for none.
func (e *Env) NeedsToken() bool { return !e.Demo() }

// CanAuthenticate tells whether an API server can check a bearer token
// (serve's scrape auth): the demo has no API server to ask.
func (e *Env) CanAuthenticate() bool { return !e.Demo() }

// Outlives tells whether what a command creates outlives the command: the
// demo's simulated fleet, and whatever was created in it, ends with it.
func (e *Env) Outlives() bool { return !e.Demo() }

// CanForward is Env.CanForward for the connection's environment.
func (c *Conn) CanForward() bool { return c.env.CanForward() }

// NeedsToken is Env.NeedsToken for the connection's environment.
func (c *Conn) NeedsToken() bool { return c.env.NeedsToken() }

// Outlives is Env.Outlives for the connection's environment.
func (c *Conn) Outlives() bool { return c.env.Outlives() }
