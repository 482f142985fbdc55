// Release builds link the functions runs execute together (see the module).
#[path = "../../build/code_order.rs"]
mod code_order;

fn main() {
    code_order::link_in_code_order();
}
