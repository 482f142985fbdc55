run "eq" {
  command = plan
  assert {
    condition     = var.x == "world"
    error_message = "x is wrong"
  }
}
run "obj" {
  command = plan
  assert {
    condition     = output.o == { a = 1, b = "three", c = [1, 3] }
    error_message = "o is wrong"
  }
}
run "ne" {
  command = plan
  assert {
    condition     = var.x != "hello"
    error_message = "ne wrong"
  }
}
run "num" {
  command = plan
  assert {
    condition     = length(var.x) == 4
    error_message = "len wrong"
  }
}
run "sametype_lastchange" {
  command = plan
  assert {
    condition     = { x = var.x, y = "a" } == { x = "b", y = "c" }
    error_message = "w"
  }
}
run "difftype_keep" {
  command = plan
  assert {
    condition     = { x = var.x, y = "a" } == { x = "b", y = 1 }
    error_message = "w"
  }
}
run "drop_line" {
  command = plan
  assert {
    condition     = { x = var.x, y = "a" } == { x = "hello" }
    error_message = "w"
  }
}
run "list3" {
  command = plan
  assert {
    condition     = [var.x, "a", "b"] == ["hello", "b"]
    error_message = "w"
  }
}
run "sens" {
  command = plan
  assert {
    condition     = var.s == "x"
    error_message = "sens"
  }
}
run "sensobj" {
  command = plan
  assert {
    condition     = { a = var.s, b = var.y } == { a = "x", b = "y" }
    error_message = "sensobj"
  }
}
run "gt" {
  command = plan
  assert {
    condition     = length(var.y) > 10
    error_message = "gt"
  }
}
run "and" {
  command = plan
  assert {
    condition     = var.y == "a" && var.y == "b"
    error_message = "and"
  }
}
run "esc" {
  command = plan
  assert {
    condition     = "<a&b>${var.y}" == "x"
    error_message = "esc"
  }
}
run "ratio" {
  command = plan
  assert {
    condition     = length(var.y) / 2 == 0.1
    error_message = "num"
  }
}
