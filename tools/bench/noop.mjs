// An empty program: the bootstrap benchmark measures what `node tools/bootstrap/bootstrap.cjs`
// adds on top of starting Node with it.
