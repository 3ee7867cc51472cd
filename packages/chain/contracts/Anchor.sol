// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title labelgate settlement anchor
/// @notice Records the Merkle root of a batch of settled ledger records (RFC 9162 tree over keccak-256)
/// in an `Anchored` event. Nothing is stored: the event in the transaction's receipt is the proof of
/// anchoring, which keeps one anchor at about 23k gas whatever the batch size.
contract Anchor {
    /// @notice The only account allowed to anchor (the deployer). Immutable: checked without a storage read.
    address public immutable owner;

    /// @notice A batch of ledger records, sequences firstSequence..lastSequence, has Merkle root `root`.
    event Anchored(bytes32 indexed root, uint64 firstSequence, uint64 lastSequence);

    error NotOwner();
    error InvalidRange();

    constructor() {
        owner = msg.sender;
    }

    /// @notice Anchors `root` of the ledger records firstSequence..lastSequence (inclusive).
    function anchor(bytes32 root, uint64 firstSequence, uint64 lastSequence) external {
        if (msg.sender != owner) revert NotOwner();
        if (firstSequence > lastSequence) revert InvalidRange();
        emit Anchored(root, firstSequence, lastSequence);
    }
}
