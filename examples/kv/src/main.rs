fn main() {
    terrane_sdk::serve("terrane", terrane_example_kv::Kv)
}
