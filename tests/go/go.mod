module flakery.test/cgo

go 1.19
