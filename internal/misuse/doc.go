// Package misuse is empty on purpose: TestCORE2 overlays a file into it that
// calls a troupe.Service without a permit, and checks that it does not
// compile.
package misuse
