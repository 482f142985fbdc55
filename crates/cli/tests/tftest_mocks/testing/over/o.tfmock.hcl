override_data {
  target = data.local_file.f
  values = {
    content = "overridden"
  }
}
