module example.com/fcorr/examples/gostack

go 1.21
