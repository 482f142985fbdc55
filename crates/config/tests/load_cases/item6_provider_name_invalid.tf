provider "my_cloud" {}
