run "again" {
  command = apply
}
