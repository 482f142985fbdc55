region = "us-east-1"
count=3
tags = {
  a="b"
    c = "d"
}
list = [1,2]
