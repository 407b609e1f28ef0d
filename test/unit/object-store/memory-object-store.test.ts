import { MemoryObjectStore } from "../../../shared/object-store/memory-object-store.ts";
import { objectStoreContract } from "./object-store-contract.ts";

objectStoreContract("MemoryObjectStore", async () => new MemoryObjectStore());
