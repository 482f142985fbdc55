mock_data "local_file" {
  defaults = {
    content = "from file"
  }
}
