resource "terraform_data" "server" {
  input = ["--port=8080", "--host=0.0.0.0", "a = b"]
}
