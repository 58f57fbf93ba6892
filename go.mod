module github.com/zoohq/zoo

go 1.25
