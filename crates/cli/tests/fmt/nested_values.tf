resource "terraform_data" "d" {
  input = {
    name = "a"
      ports = [80,
    443]
    tags = {
  env="dev"
    }
  }
  triggers_replace = [
  "a",
        "b",
  ]
}
